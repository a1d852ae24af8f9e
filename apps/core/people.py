"""Who did it: which users a "who" field may name to whom.

A who field names the user who did something to a record: its `created_by`, `updated_by`,
`uploaded_by` or `deleted_by` stamp (`apps.core.models.user_stamp`), or the author of one of
its versions. A record that moved from one agency into another keeps the stamps its old
agency's staff left on it; shown as they are, they would name that agency's people to the
agency it joined. So a who field names a user only if that user is a member of one of the
agencies the viewer acts for (`agency_ids_for`, the notion that scopes the records and their
versions, apps.core.history), or is a superuser, who acts for every agency; anyone else is
not named: null in the API, `NOT_VISIBLE` in the admin. A superuser sees every name.

Written once here for the API's serializers (`PersonField`), the change feed's records (the
agency an event is for is its viewer) and the admin's columns, forms and history pages.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q

from apps.core.models import agency_ids_for

# How the admin shows a user it does not name.
NOT_VISIBLE = "(another agency)"


class People:
    """The users a viewer may see named (see the module's docstring).

    Read in one query, the first time a who field names someone, and kept: one per request
    for a caller (`people_for`), one per record for an event. `agency_ids` None: every user
    (a superuser's view; its names are read from the records' own users)."""

    def __init__(self, agency_ids):
        self.agency_ids = None if agency_ids is None else tuple(agency_ids)
        self._names: dict[int, str] | None = None

    @property
    def everyone(self) -> bool:
        return self.agency_ids is None

    def _members(self) -> dict[int, str]:
        if self._names is None:
            users = get_user_model()._default_manager.filter(
                Q(is_superuser=True) | Q(agency_memberships__agency_id__in=self.agency_ids)
            )
            field = get_user_model().USERNAME_FIELD
            self._names = dict(users.order_by().values_list("pk", field).distinct())
        return self._names

    def sees(self, user_id) -> bool:
        """Whether the user with this id may be named to the viewer."""
        return self.everyone or user_id in self._members()

    def name(self, record, field: str) -> str | None:
        """The username of the user `record.<field>` names (a who field's foreign key), if the
        viewer may see it named; None when it names nobody or someone the viewer may not see.
        Only the key is read: the user's row only for a viewer who sees everyone (then joined
        by the record's selector, as the field always was)."""
        user_id = getattr(record, f"{field}_id")
        if user_id is None:
            return None
        if self.everyone:
            return getattr(record, field).get_username()
        return self._members().get(user_id)


def people_for(user) -> People:
    """The people `user` may see named, remembered on the user object (one per request, as
    `agency_ids_for` is)."""
    people = getattr(user, "_people", None)
    if people is None:
        people = People(agency_ids_for(user))
        if user is not None:
            user._people = people
    return people


def people_of_agency(agency_id) -> People:
    """The people the staff of one agency may see named: the viewer of what is written for
    that agency alone (a change-feed event's record)."""
    return People([] if agency_id is None else [agency_id])
