"""`compliance.changed` (contract sections 14 and 15): a client's verdict under a watched
profile changed.

Only profiles that an active webhook subscription names are watched, so an agency without
such a subscription costs one query. Verdicts are those of verification (same evaluation,
same policies read in force on the day and later), computed set-based: a constant number of
queries whatever the number of clients.

Two callers:
- `compliance_changes_for_day(day=…)` from the daily calendar job: yesterday's verdicts
  against today's on the same data, so only what time alone changed (a policy entering its
  expiration notice, expiring, coming in force) is emitted;
- `compliance_watch(client_ids=…)` around a write (a policy or client change), like
  `status_watch`: the verdicts before and after the block.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.db import transaction

from apps.clients.models import Client
from apps.compliance.evaluation import CompiledProfile, Reason, verdict
from apps.compliance.models import RequirementProfile
from apps.compliance.serializers import ReasonSerializer
from apps.core.dates import today
from apps.coverages.selectors import policies_by_client
from apps.events.selectors import Watched, already_announced
from apps.events.services import event_emit
from apps.policies.models import Policy
from apps.webhooks.models import Webhook

# {(client id, profile id): (agency id, result, reasons)}
Snapshot = dict[tuple[int, int], tuple[int, str, list[Reason]]]


def _watched_profiles(profile_id: int | None = None) -> list[RequirementProfile]:
    ids = Webhook.objects.filter(active=True, profile_id__isnull=False)
    if profile_id is not None:
        ids = ids.filter(profile_id=profile_id)
    ids = ids.values("profile_id")
    return list(RequirementProfile.objects.filter(pk__in=ids).order_by("id"))


def compliance_snapshot(
    *,
    on: dt.date,
    client_ids: Iterable[int] | None = None,
    profile_id: int | None = None,
) -> Snapshot:
    """Every live client's verdict under every watched profile of its agency, on a day (all
    clients of those agencies when `client_ids` is None; one profile with `profile_id`)."""

    profiles = _watched_profiles(profile_id)
    if not profiles:
        return {}
    clients = (
        Client.objects.live()
        .filter(agency_id__in={p.agency_id for p in profiles})
        .only("id", "agency_id", "cargo_class")
    )
    if client_ids is not None:
        clients = clients.filter(pk__in=list(client_ids))
    clients = list(clients)
    if not clients:
        return {}
    policies = policies_by_client((c.id for c in clients), on)
    snapshot: Snapshot = {}
    for profile in profiles:
        compiled = CompiledProfile.of(profile)
        for client in clients:
            if client.agency_id != profile.agency_id:
                continue
            answer = verdict(
                compiled,
                policies=policies.get(client.id, []),
                cargo_class=client.cargo_class,
                on=on,
            )
            snapshot[(client.id, profile.id)] = (client.agency_id, answer.result, answer.reasons)
    return snapshot


def compliance_changes_emit(*, before: Snapshot, after: Snapshot, day: dt.date) -> int:
    """One `compliance.changed` per (client, profile) whose result differs; how many. A pair
    absent before (a new client, a new subscription) has no `from` and emits nothing."""

    emitted = 0
    for (client_id, profile_id), (agency_id, new, reasons) in sorted(after.items()):
        old = before.get((client_id, profile_id))
        if old is None or old[1] == new:
            continue
        event_emit(
            type="compliance.changed",
            agency_id=agency_id,
            client_id=client_id,
            data={
                "client_id": client_id,
                "profile_id": profile_id,
                "from": old[1],
                "to": new,
                "reasons": [ReasonSerializer.shape(r) for r in reasons],
                "as_of": day,
            },
        )
        emitted += 1
    return emitted


def compliance_changes_for_day(*, day: dt.date) -> int:
    """The verdicts the passage of time changed on `day`; how many events. For the daily
    calendar job (which runs once per day, a missed day caught up later), inside its
    transaction."""
    before = compliance_snapshot(on=day - dt.timedelta(days=1))
    after = compliance_snapshot(on=day)
    # Snapshot: {(client id, profile id): (agency id, verdict, reasons)}
    watched = Watched(before, after, ("clientId", "profileId"), 1)
    already_announced(day=day, watched={"compliance.changed": watched})
    return compliance_changes_emit(before=before, after=after, day=day)


@contextmanager
def compliance_watch(*, client_ids: Iterable[int], on: dt.date | None = None) -> Iterator[None]:
    """Emit `compliance.changed` for the clients whose verdict the block changes."""

    day = on or today()
    clients = {pk for pk in client_ids if pk is not None}
    with transaction.atomic():
        before = compliance_snapshot(on=day, client_ids=clients) if clients else {}
        yield
        after = compliance_snapshot(on=day, client_ids=clients) if clients else {}
        compliance_changes_emit(before=before, after=after, day=day)


@contextmanager
def compliance_profile_watch(*, profile_id: int, agency_id: int) -> Iterator[None]:
    """Emit `compliance.changed` for the agency's clients whose verdict under this profile
    the block (a change of its rules) changes."""

    day = today()
    with transaction.atomic():
        before = compliance_snapshot(on=day, profile_id=profile_id)
        yield
        after = compliance_snapshot(on=day, profile_id=profile_id)
        compliance_changes_emit(before=before, after=after, day=day)


def clients_insured_by(insurer_id: int) -> list[int]:
    """The clients with a live policy of this insurer: whose verdicts a change of its AM Best
    rating can move (rule `insurer_rating`)."""

    return list(
        Policy.objects.live()
        .filter(insurer_id=insurer_id)
        .values_list("client_id", flat=True)
        .distinct()
    )
