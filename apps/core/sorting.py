"""`sort=field,-other`: camelCase names mapped to ORM paths, ties always broken by id.

A view's `sort_fields` name fields (contract section 7: `id`, `createdAt`, `updatedAt` and
every field its list filters on), never a parameter that is not one: a search over several
fields (`q`), paging or sorting itself, `asOf` (tests/core/test_sort_keys.py checks every list).

A field sorts by its column as the database compares it, or by a `SortKey` where that order is
not the one readers expect, the same on SQLite and PostgreSQL: a name ignoring case
(`IgnoringCase`), digits stored without leading zeros in numeric order (`AsNumber`). A list read
page by page at a large agency needs an index of the key's expressions, (agency, key..., id),
as of a plain column (issue 18).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from django.db.models import F, OrderBy
from django.db.models.functions import Length, Lower
from rest_framework.exceptions import ValidationError
from rest_framework.filters import BaseFilterBackend

BASE_SORT_FIELDS = {"id": "id", "createdAt": "created_at", "updatedAt": "updated_at"}


class SortKey(ABC):
    """A field's order other than its column's: the expressions of `key()`, in turn."""

    def __init__(self, column: str):
        self.column = column

    @abstractmethod
    def key(self) -> tuple:
        """The expressions `column` sorts by, in turn."""

    def terms(self, descending: bool) -> list[OrderBy]:
        return [
            OrderBy(F(part) if isinstance(part, str) else part, descending=descending)
            for part in self.key()
        ]


class IgnoringCase(SortKey):
    """Text in alphabetical order whatever its case ("alpha" before "Bravo"): SQLite compares
    bytes (every capitalised name first) and PostgreSQL as its collation says."""

    def key(self) -> tuple:
        return (Lower(self.column),)


class AsNumber(SortKey):
    """Digits stored without leading zeros (a DOT, contract section 13) in numeric order: a
    shorter one first, then as text (987654 before 5550003, where text put it after)."""

    def key(self) -> tuple:
        return (Length(self.column), self.column)


def sort_fields_of(view) -> dict:
    return {**BASE_SORT_FIELDS, **getattr(view, "sort_fields", {})}


def order_by_for(raw: str | None, fields: dict, default: tuple) -> list:
    """Translate a `sort` value into order_by terms; an unknown field is a 400."""
    terms: list[str] = []
    names = [part.strip() for part in (raw or "").split(",") if part.strip()]
    for name in names:
        # One sign at most: `-name` descending, `+name` (sent as %2B) ascending.
        descending = name.startswith("-")
        key = name[1:] if name[0] in "+-" else name
        if key not in fields:
            allowed = ", ".join(sorted(fields))
            signs = key[:1] in ("+", "-")
            named = f"'{name}': one sign at most" if signs else f"'{key or name}'"
            raise ValidationError({"sort": [f"Cannot sort by {named}. Sortable: {allowed}."]})
        field = fields[key]
        if isinstance(field, SortKey):
            terms.extend(field.terms(descending))
        else:
            terms.append(("-" if descending else "") + field)
    if not terms:  # the view's own order: columns (`-name` descending) or ascending keys
        for term in default:
            terms.extend(term.terms(False) if isinstance(term, SortKey) else [term])
    if not any(isinstance(term, str) and term.lstrip("-") == "id" for term in terms):
        terms.append("id")
    return terms


def reversed_term(term):
    """An order term the other way: `name` and `-name`, or an expression's `OrderBy`."""
    if isinstance(term, str):
        return term[1:] if term.startswith("-") else f"-{term}"
    return term.copy().reverse_ordering()


class SortFilter(BaseFilterBackend):
    sort_param = "sort"

    def filter_queryset(self, request, queryset, view):
        default = getattr(view, "default_sort", ("id",))
        raw = request.query_params.get(self.sort_param)
        return queryset.order_by(*order_by_for(raw, sort_fields_of(view), default))

    def get_schema_operation_parameters(self, view):
        names = sorted(sort_fields_of(view))
        return [
            {
                "name": self.sort_param,
                "required": False,
                "in": "query",
                "description": "Comma-separated fields, '-' for descending. Sortable: "
                + ", ".join(names),
                "schema": {"type": "string"},
            }
        ]
