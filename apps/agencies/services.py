"""Writes of agencies, their producers and memberships, and who may write for an agency."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict, Unpack

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from apps.agencies.models import Agency, AgencyMembership, Producer
from apps.core.models import acts_for, agency_ids_for
from apps.core.services import delete_unused, model_update

NO_AGENCY = "You act for no agency: a membership of one is needed first."


def authorized_agency(user, agency_id: int | None, *, implied: bool = False) -> Agency:
    """The agency a write names; any agency outside the caller's is 403, existing or not.

    With `implied`, naming none means the caller's only agency (a 400 when they act for
    several, or for all as a superuser does, and when they act for none).
    """
    allowed = agency_ids_for(user)
    if agency_id is None:
        if allowed is not None and not allowed:  # staff with permissions and no membership
            raise ValidationError({"agency_id": NO_AGENCY})
        if implied and allowed is not None and len(allowed) == 1:
            agency_id = allowed[0]
        else:
            raise ValidationError({"agency_id": "Name the agency: you act for several."})
    if not acts_for(user, agency_id):
        raise PermissionDenied("You are not authorized for this agency.")
    agency = Agency.objects.filter(pk=agency_id).first()
    if agency is None:
        raise ValidationError({"agency_id": "Unknown agency."})
    return agency


def agency_kept(user, record, agency_id: int | None, *, noun: str) -> None:
    """A record stays in its agency: a write naming another one is refused, 403 when the
    caller is not authorized for that agency (existing or not, as everywhere a write names
    an agency), else 400."""
    if agency_id is None or agency_id == record.agency_id:
        return
    authorized_agency(user, agency_id)
    raise ValidationError({"agency_id": f"A {noun} cannot move to another agency."})


def agency_record_create(*, user, model, agency_id: int, **fields):
    """A record an agency keeps (a producer, a lienholder), in an agency the user acts for."""
    record = model(agency=authorized_agency(user, agency_id), **fields)
    record.full_clean()
    record.save()
    return record


def agency_record_update(*, user, instance, fields, changes):
    """Partial update of a record an agency keeps (a producer, a lienholder): found among
    the user's agencies' records, and never moved to another agency."""
    record = type(instance).objects.for_user(user).select_for_update().get(pk=instance.pk)
    agency_kept(user, record, changes.get("agency_id"), noun=record._meta.verbose_name)
    model_update(instance=record, fields=fields, data=changes)
    return record


def _superuser_only(user, verb: str) -> None:
    """Agencies are the unit of isolation: only who acts for every agency makes or ends one."""
    if agency_ids_for(user) is not None:
        raise PermissionDenied(f"Only a superuser {verb} agencies.")


class AgencyFields(TypedDict, total=False):
    address: str
    phone: str
    email: str


@transaction.atomic
def agency_create(*, user, name: str, **fields: Unpack[AgencyFields]) -> Agency:
    """A new agency (its federal-minimum profile follows, see apps.compliance)."""
    _superuser_only(user, "creates")
    agency = Agency(name=name, **fields)
    agency.full_clean()
    agency.save()
    return agency


class AgencyChanges(AgencyFields, total=False):
    name: str


@transaction.atomic
def agency_update(*, user, instance: Agency, **changes: Unpack[AgencyChanges]) -> Agency:
    """Partial update of an agency the user acts for."""
    agency = Agency.objects.select_for_update().get(pk=authorized_agency(user, instance.pk).pk)
    fields = tuple(AgencyChanges.__annotations__)
    model_update(instance=agency, fields=fields, data=changes)
    return agency


@transaction.atomic
def agency_delete(*, user, instance: Agency) -> None:
    """Delete an agency that holds nothing (no client, producer or lienholder)."""
    _superuser_only(user, "deletes")
    delete_unused(instance, "The agency is in use and cannot be deleted.")


class ProducerFields(TypedDict, total=False):
    contact_name: str
    address: str
    phone: str
    email: str


@transaction.atomic
def producer_create(
    *, user, agency_id: int, name: str, **fields: Unpack[ProducerFields]
) -> Producer:
    """A producer of an agency the user acts for; its name is unique in the agency."""
    return agency_record_create(user=user, model=Producer, agency_id=agency_id, name=name, **fields)


class ProducerChanges(ProducerFields, total=False):
    name: str
    agency_id: int  # its own agency only: clients and policies name it


@transaction.atomic
def producer_update(*, user, instance: Producer, **changes: Unpack[ProducerChanges]) -> Producer:
    """Partial update; a producer stays in its agency."""
    fields = ("name", *ProducerFields.__annotations__)
    return agency_record_update(user=user, instance=instance, fields=fields, changes=changes)


# What a producer's deletion releases first: the records that name it (clients, policies),
# each cleared by its own app's service, with its history version and change event, rather
# than nulled behind the audit by the database's SET_NULL. Registered by those apps when they
# are ready (agencies sit below them and cannot call them), as events' FAN_OUT is.
PRODUCER_RELEASES: dict[str, Callable] = {}


def producer_release_register(name: str, release: Callable) -> None:
    """Name a service that, given `user=` and `producer=`, clears the producer from the records
    of an app that names producers, inside the deletion's transaction."""
    PRODUCER_RELEASES[name] = release


@transaction.atomic
def producer_delete(*, user, instance: Producer) -> None:
    """Delete a producer; the clients and policies that named it keep no producer, each
    cleared through its app's service (`PRODUCER_RELEASES`): audited and announced."""
    producer = Producer.objects.for_user(user).get(pk=instance.pk)
    for release in PRODUCER_RELEASES.values():
        release(user=user, producer=producer)
    delete_unused(producer, "The producer is in use and cannot be deleted.")


@transaction.atomic
def membership_create(*, user, member_id: int, agency_id: int) -> AgencyMembership:
    """Let a user act for an agency the granting user acts for."""
    agency = authorized_agency(user, agency_id)
    member = get_user_model().objects.filter(pk=member_id).first()
    if member is None:
        raise ValidationError({"user": "No user with this id."})
    membership = AgencyMembership(user=member, agency=agency)
    membership.full_clean()
    membership.save()
    return membership


@transaction.atomic
def membership_delete(*, user, instance: AgencyMembership) -> None:
    """Revoke a user's right to act for an agency (at once, on every node: see principal)."""
    AgencyMembership.objects.for_user(user).get(pk=instance.pk).delete()
