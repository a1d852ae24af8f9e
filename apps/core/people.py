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

import functools

from django.contrib.auth import get_user_model
from django.db.models import Model, Q

from apps.core.models import agency_ids_for

# How the admin shows a user it does not name.
NOT_VISIBLE = "(another agency)"


def is_who_field(field) -> bool:
    """Whether a model field is a who field: a foreign key to the user without a reverse
    accessor (`user_stamp`, a version's `history_user`); a membership's `user`, the member,
    is not one."""
    return (
        field.many_to_one
        and field.concrete
        and field.related_model is get_user_model()
        and field.remote_field.hidden
    )


@functools.cache
def _who_attnames(model) -> tuple[str, ...]:
    return tuple(f.attname for f in model._meta.get_fields() if is_who_field(f))


class People:
    """The users a viewer may see named (see the module's docstring).

    Read for the users a page names, not for every member of the viewer's agencies: the
    records a page shows are announced first (`expect`), and the first name asked for reads
    all the users they name in one query; a user asked for that was not announced is read then,
    with the other who fields of the record that names them. Kept, once read: one per request
    for a caller (`people_for`), one per record for an event. `agency_ids` None: every user (a
    superuser's view; its names are read from the records' own users)."""

    def __init__(self, agency_ids):
        self.agency_ids = None if agency_ids is None else tuple(agency_ids)
        self._names: dict[int, str | None] = {}  # None: not named to the viewer
        self._expected: set[int] = set()

    @property
    def everyone(self) -> bool:
        return self.agency_ids is None

    def expect(self, records, fields: tuple[str, ...] | None = None) -> None:
        """Announce `records` (model instances; anything else is passed over), whose who fields
        (`fields`, or all their model has) are to be named: read with the first name asked."""
        if self.everyone:
            return
        fields = None if fields is None else tuple(f"{field}_id" for field in fields)
        for record in records:
            if not isinstance(record, Model):
                continue
            attnames = _who_attnames(type(record)) if fields is None else fields
            for attname in attnames:
                user_id = getattr(record, attname)
                if user_id is not None and user_id not in self._names:
                    self._expected.add(user_id)

    def _member_name(self, user_id) -> str | None:
        if user_id not in self._names:
            wanted = self._expected | {user_id}
            named_here = Q(is_superuser=True) | Q(agency_memberships__agency_id__in=self.agency_ids)
            users = get_user_model()._default_manager.filter(named_here, pk__in=wanted)
            field = get_user_model().USERNAME_FIELD
            named = dict(users.order_by().values_list("pk", field).distinct())
            self._names.update({pk: named.get(pk) for pk in wanted})
            self._expected.clear()
        return self._names[user_id]

    def sees(self, user_id) -> bool:
        """Whether the user with this id may be named to the viewer."""
        return self.everyone or self._member_name(user_id) is not None

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
        if user_id not in self._names:
            self.expect([record])  # the record's other who fields, read with this one
        return self._member_name(user_id)


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


def people_of_agencies(records_by_agency: dict) -> dict:
    """`people_of_agency` for each agency of many records (an insurer renamed: its policies in
    every agency), each knowing the names its records' who fields may show, read for them all
    in one query, whatever the number of records and agencies."""
    peoples = {agency_id: people_of_agency(agency_id) for agency_id in records_by_agency}
    wanted: set[int] = set()
    for agency_id, records in records_by_agency.items():
        peoples[agency_id].expect(records)
        wanted |= peoples[agency_id]._expected
    if not wanted:
        return peoples
    field = get_user_model().USERNAME_FIELD
    rows = (
        get_user_model()
        ._default_manager.filter(pk__in=wanted)
        .order_by()
        .values_list("pk", field, "is_superuser", "agency_memberships__agency_id")
    )
    names: dict[int, str] = {}
    superusers: set[int] = set()
    members: set[tuple[int, int]] = set()
    for pk, name, superuser, agency_id in rows:
        names[pk] = name
        if superuser:
            superusers.add(pk)
        if agency_id is not None:
            members.add((pk, agency_id))
    for agency_id, people in peoples.items():
        people._names.update(
            {
                pk: names.get(pk) if pk in superusers or (pk, agency_id) in members else None
                for pk in people._expected
            }
        )
        people._expected.clear()
    return peoples
