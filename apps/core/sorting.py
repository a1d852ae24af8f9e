"""`sort=field,-other`: camelCase names mapped to ORM paths, ties always broken by id.

A view's `sort_fields` name fields (contract section 7: `id`, `createdAt`, `updatedAt` and
every field its list filters on), never a parameter that is not one: a search over several
fields (`q`), paging or sorting itself, `asOf` (tests/core/test_sort_keys.py checks every list)."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.filters import BaseFilterBackend

BASE_SORT_FIELDS = {"id": "id", "createdAt": "created_at", "updatedAt": "updated_at"}


def sort_fields_of(view) -> dict[str, str]:
    return {**BASE_SORT_FIELDS, **getattr(view, "sort_fields", {})}


def order_by_for(raw: str | None, fields: dict[str, str], default: tuple[str, ...]) -> list[str]:
    """Translate a `sort` value into order_by terms; an unknown field is a 400."""
    terms: list[str] = []
    names = [part.strip() for part in (raw or "").split(",") if part.strip()]
    for name in names:
        # One sign at most: `-name` descending, `+name` (sent as %2B) ascending.
        descending = name.startswith("-")
        key = name[1:] if name[0] in "+-" else name
        if key not in fields:
            allowed = ", ".join(sorted(fields))
            raise ValidationError({"sort": [f"Cannot sort by '{key}'. Sortable: {allowed}."]})
        terms.append(("-" if descending else "") + fields[key])
    if not terms:
        terms = list(default)
    if not any(term.lstrip("-") == "id" for term in terms):
        terms.append("id")
    return terms


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
