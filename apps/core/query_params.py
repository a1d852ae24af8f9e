"""A query parameter that takes one value and is sent twice is a 400, and so is a path id
past 2^63-1 (contract section 13).

Django's QueryDict.get() silently returns the LAST value, so `?dot=1&dot=2` verified DOT 2 and
a filter, a page number or an id could be overridden by whatever a proxy or a careless client
appended. The rule is enforced once, here, for every /v1 view: a parameter may repeat only if
the view's `params_class` reads it as a list (`dots` on verification, `type` on the event
feed) or its filterset declares a multiple-choice filter of that name.
"""

from __future__ import annotations

import functools

import django_filters
from django.http import JsonResponse
from rest_framework.serializers import ListField

from apps.core.camel_case import camel
from apps.core.params import MAX_BIGINT, is_ascii_int
from apps.core.problems import PROBLEM_CONTENT_TYPE, problem_body

_MULTIPLE = (django_filters.MultipleChoiceFilter, django_filters.ModelMultipleChoiceFilter)


@functools.cache
def repeatable_params(view_class) -> frozenset[str]:
    """The query parameters `view_class` reads as lists: its `params_class`'s list fields and
    its filterset's multiple-choice filters. Once per class: the params class's fields are
    deep-copied for each instance, on every request that repeated a parameter (issue 18)."""
    names = set()
    params_class = getattr(view_class, "params_class", None)
    if params_class is not None:
        names.update(
            camel(name)
            for name, field in params_class().fields.items()
            if isinstance(field, ListField)
        )
    filterset_class = getattr(view_class, "filterset_class", None)
    if filterset_class is not None:
        names.update(
            name
            for name, declared in filterset_class.base_filters.items()
            if isinstance(declared, _MULTIPLE)
        )
    return frozenset(names)


class SingleValuedQueryMiddleware:
    """Refuses a repeated single-valued query parameter under /v1 with a problem+json 400."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if not request.path.startswith("/v1/"):
            return None
        # Path ids: the URL patterns take any run of digits; past 2^63-1 no row can have it.
        too_big = [
            name
            for name, value in view_kwargs.items()
            if (name in ("pk", "id") or name.endswith("_id"))
            and (int(value) if isinstance(value, int) else _digits(value)) > MAX_BIGINT
        ]
        if too_big:
            return _problem(
                [
                    (camel(name) if name != "pk" else "id", "At most 9223372036854775807.")
                    for name in too_big
                ],
                code="max_value",
            )
        if not request.GET:
            return None
        repeated = [name for name, values in request.GET.lists() if len(values) > 1]
        if not repeated:
            return None
        view_class = getattr(view_func, "cls", None) or getattr(view_func, "view_class", None)
        allowed = repeatable_params(view_class) if view_class is not None else frozenset()
        refused = [name for name in repeated if name not in allowed]
        if not refused:
            return None
        return _problem([(name, "Send this parameter once.") for name in refused], "repeated")


def _digits(value) -> int:
    return int(value) if is_ascii_int(value) else 0


def _problem(errors: list[tuple[str, str]], code: str) -> JsonResponse:
    """A problem+json 400 shaped like every other validation error."""
    detail = "; ".join(f"{field}: {message}" for field, message in errors)
    body = problem_body(400, detail, [{"field": f, "message": m, "code": code} for f, m in errors])
    response = JsonResponse(body, status=400)
    response["Content-Type"] = PROBLEM_CONTENT_TYPE
    return response
