"""Compliance documents attached to a client or a policy, with their previous versions."""

from __future__ import annotations

import operator
from functools import reduce

from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from apps.core.models import (
    AgencyScopedQuerySet,
    SoftDeleteMixin,
    SoftDeleteQuerySet,
    is_live,
    live_q,
    user_stamp,
)


class Module(models.TextChoices):
    CLIENT = "client", "Client"
    POLICY = "policy", "Policy"


def module_permission(action: str, module: str) -> str:
    """The permission an `action` ("view", "edit", "delete") on a module's documents needs
    (`Document.Meta.permissions`): the API's document endpoints ask it, and the back-office
    lists a module's documents on a change page only to staff holding its "view"."""
    return f"documents.{action}_{module}_documents"


# The one rule of a live document: it is not deleted, and neither is the owner it goes with.
# A document goes with its owner: while the client (a client document) or the policy (a policy
# document) is deleted every route answers for it as for a deleted document, and it is back when
# the owner is restored. A policy stays live when its client is deleted, and so do its documents.
LIVE_WITH: dict[str, tuple[str, ...]] = {Module.CLIENT: ("client",), Module.POLICY: ("policy",)}


def live_document_q() -> Q:
    """`LIVE_WITH` as a condition on documents."""
    return reduce(
        operator.or_, (Q(module=module) & live_q("", *with_) for module, with_ in LIVE_WITH.items())
    )


class DocumentQuerySet(SoftDeleteQuerySet):
    agency_field = "client__agency"

    def live(self, *owners: str) -> DocumentQuerySet:
        """Live documents (`LIVE_WITH`); with owners, those owners live too. Every reader goes
        through it: the API's lists, download and link, the admin's lists, pages and download."""
        documents = self.filter(live_document_q())
        return documents.filter(live_q(*owners)) if owners else documents

    def not_live(self) -> DocumentQuerySet:
        """The documents `live()` leaves out: deleted, or gone with their owner."""
        return self.exclude(live_document_q())


class Document(SoftDeleteMixin, models.Model):
    """A stored file of a client (module "client") or of one of its policies ("policy")."""

    module = models.CharField(max_length=10, choices=Module.choices)
    client = models.ForeignKey("clients.Client", on_delete=models.PROTECT, related_name="documents")
    policy = models.ForeignKey(
        "policies.Policy",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="documents",
    )
    file_name = models.CharField(max_length=255)
    storage_name = models.CharField(max_length=500, help_text="Path in document storage.")
    content_type = models.CharField(max_length=120)
    size = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    description = models.CharField(max_length=500, blank=True)
    uploaded_at = models.DateTimeField(auto_now_add=True)
    uploaded_by = user_stamp()
    updated_at = models.DateTimeField(auto_now=True)
    deleted = models.BooleanField(default=False, db_index=True)
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = user_stamp()

    objects = DocumentQuerySet.as_manager()
    history = HistoricalRecords(excluded_fields=["updated_at"])

    class Meta:
        ordering = ["-uploaded_at", "id"]
        indexes = [
            models.Index(fields=["client", "module", "deleted"], name="documents_client_idx"),
            models.Index(fields=["policy", "deleted"], name="documents_policy_idx"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(module="client", policy__isnull=True)
                | Q(module="policy", policy__isnull=False),
                name="%(app_label)s_%(class)s_module_matches_owner",
                violation_error_message="A policy document names its policy; a client one none.",
            )
        ]
        permissions = [
            ("view_client_documents", "View client documents"),
            ("edit_client_documents", "Create and edit client documents"),
            ("delete_client_documents", "Delete client documents"),
            ("view_policy_documents", "View policy documents"),
            ("edit_policy_documents", "Create and edit policy documents"),
            ("delete_policy_documents", "Delete policy documents"),
        ]

    def __str__(self) -> str:
        return self.file_name

    @property
    def live(self) -> bool:
        """`LIVE_WITH` for this document: a deleted one, or one whose owner (its client, its
        policy) is deleted, answers as deleted (404 on download, 422 on replace and delete)."""
        return is_live(self, *LIVE_WITH[self.module])


class DocumentVersionQuerySet(AgencyScopedQuerySet):
    agency_field = "document__client__agency"


class DocumentVersion(models.Model):
    """A file a document held before it was replaced."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="versions")
    file_name = models.CharField(max_length=255)
    storage_name = models.CharField(max_length=500)
    content_type = models.CharField(max_length=120)
    size = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    uploaded_at = models.DateTimeField()
    uploaded_by = user_stamp()
    replaced_at = models.DateTimeField(auto_now_add=True)

    objects = DocumentVersionQuerySet.as_manager()

    class Meta:
        ordering = ["-replaced_at", "id"]

    def __str__(self) -> str:
        return f"{self.file_name} (replaced {self.replaced_at:%Y-%m-%d})"
