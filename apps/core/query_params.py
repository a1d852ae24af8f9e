"""A query parameter that takes one value and is sent twice is a 400, and so is a path id
past 2^63-1 (contract section 13), and a parameter's value holding NUL.

Django's QueryDict.get() silently returns the LAST value, so `?dot=1&dot=2` verified DOT 2 and
a filter, a page number or an id could be overridden by whatever a proxy or a careless client
appended. The rule is enforced once, here, for every /v1 view, on the parameters the operation
takes (`operation_query_parameters`: the ones its OpenAPI operation declares): one of them may
repeat only if the view reads it as a list (`dots` on verification, `type` on the event feed, a
multiple-choice filter). A parameter the operation does not take is ignored, repeated or not,
as it is when sent once: `GET /v1/me?foo=1&foo=2` is `GET /v1/me`, which declares no 400
(contract section 1).
"""

from __future__ import annotations

import codecs
import functools
from collections.abc import Mapping
from types import MappingProxyType

import django_filters
from django.conf import settings
from django.core.exceptions import TooManyFieldsSent
from django.core.handlers.wsgi import WSGIRequest
from django.http import JsonResponse, QueryDict
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.mixins import ListModelMixin
from rest_framework.serializers import ListField
from rest_framework.settings import api_settings

from apps.core.camel_case import camel
from apps.core.negotiation import renders_several_formats
from apps.core.params import MAX_BIGINT, is_ascii_int
from apps.core.parsers import NUL_MESSAGE
from apps.core.problems import (
    PROBLEM_CONTENT_TYPE,
    problem_body,
    problem_response,
    suspicious_request,
)
from apps.core.sorting import SortFilter

_MULTIPLE = (django_filters.MultipleChoiceFilter, django_filters.ModelMultipleChoiceFilter)


@functools.cache
def params_class_parameters(params_class) -> Mapping[str, bool]:
    """The query parameters `params_class` parses, each with whether it may repeat (a list
    field). Once per class: its fields are deep-copied for each instance (issue 18)."""
    return MappingProxyType(
        {camel(name): isinstance(field, ListField) for name, field in params_class().fields.items()}
    )


@functools.cache
def filterset_parameters(filterset_class) -> Mapping[str, bool]:
    """The query parameters `filterset_class` filters on, each with whether it may repeat (a
    multiple-choice filter): the GET list's and the legacy search's `filter`'s."""
    return MappingProxyType(
        {
            name: isinstance(declared, _MULTIPLE)
            for name, declared in filterset_class.base_filters.items()
        }
    )


@functools.cache
def operation_query_parameters(view_func, method: str) -> Mapping[str, bool]:
    """The query parameters the operation `method` of the route served by `view_func` takes,
    each with whether it may repeat: what its OpenAPI operation declares (the drf-spectacular
    schema reads the same sources; tests/core/test_operation_params.py holds the two equal on
    every operation). Once per operation: a dict built from the view class alone.

    - a GET's `params_class` fields (a list field may repeat);
    - on an operation that lists (a viewset's `list`, a viewset action that sorts a page of its
      own, a GET of a list view or of a view that sorts: every list takes `sort`, contract
      section 7): its filterset's filters (a multiple-choice one may repeat), `sort` and the
      paging `page` and `limit`;
    - `format` where the view renders more than one format (certificates: JSON or PDF).
    """
    cls = getattr(view_func, "cls", None)  # DRF's views and viewsets; none for plain views
    if cls is None:
        return MappingProxyType({})
    method = "GET" if method.upper() == "HEAD" else method.upper()
    taken: dict[str, bool] = {}
    params_class = getattr(cls, "params_class", None)
    if params_class is not None and method == "GET":
        taken.update(params_class_parameters(params_class))
    if _lists(view_func, cls, method):
        backends = getattr(cls, "filter_backends", ())
        filterset_class = getattr(cls, "filterset_class", None)
        if filterset_class is not None and any(
            issubclass(backend, DjangoFilterBackend) for backend in backends
        ):
            taken.update(filterset_parameters(filterset_class))
        if any(issubclass(backend, SortFilter) for backend in backends):
            taken[SortFilter.sort_param] = False
        if getattr(cls, "pagination_class", None) is not None:
            taken["page"] = taken["limit"] = False
    if api_settings.URL_FORMAT_OVERRIDE and renders_several_formats(tuple(cls.renderer_classes)):
        taken[api_settings.URL_FORMAT_OVERRIDE] = False
    return MappingProxyType(taken)  # shared by every request: read-only


def _lists(view_func, cls, method: str) -> bool:
    """Whether the operation answers a page of records."""
    actions = getattr(view_func, "actions", None)  # a viewset: its method -> action map
    if actions is not None:
        action = actions.get(method.lower())
        return action == "list" or "sort_fields" in getattr(view_func, "initkwargs", {})
    return method == "GET" and (issubclass(cls, ListModelMixin) or hasattr(cls, "sort_fields"))


@functools.cache
def _is_utf8(charset: str) -> bool:
    return codecs.lookup(charset).name == "utf-8"


def query_dict(request) -> QueryDict:
    """`request.GET`, built as Django builds it, without its cost per value for a plain query.

    Django's `QueryDict` runs `parse_qsl` (a replace and an unquote per name and per value) and
    then `appendlist` (four calls more) for every value: 0.4 ms of a 200-DOT verification, a
    twentieth of it (issue 18). A query string of ASCII without `%` or `+`, decoded as UTF-8,
    has nothing to unquote or decode, so its values are its pieces between `&` split at the
    first `=` (a piece without one is a name with an empty value, an empty piece is skipped, as
    `parse_qsl(keep_blank_values=True)` does), gathered in a dict of lists as `appendlist`
    gathers them. Anything else is Django's own `request.GET`: an escape, a `+`, a byte past
    ASCII, more fields than `DATA_UPLOAD_MAX_NUMBER_FIELDS`, a request whose encoding was set, a
    `DEFAULT_CHARSET` other than UTF-8, or a request that is not WSGI's (ASGI's builds its
    query from `META`). tests/core/test_query_dict.py compares both on awkward strings.
    """
    if not isinstance(request, WSGIRequest) or request.encoding is not None:
        return request.GET
    raw = request.environ.get("QUERY_STRING", "")
    limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
    if (
        not raw.isascii()
        or "%" in raw
        or "+" in raw
        or (limit is not None and raw and 1 + raw.count("&") > limit)
        or not _is_utf8(settings.DEFAULT_CHARSET)
    ):
        return request.GET
    lists: dict[str, list[str]] = {}
    for piece in raw.split("&") if raw else ():
        if piece:
            name, _, value = piece.partition("=")
            values = lists.get(name)
            if values is None:
                lists[name] = [value]
            else:
                values.append(value)
    built = QueryDict()
    dict.update(built, lists)  # a MultiValueDict keeps each name's list as its dict value
    return built


class SingleValuedQueryMiddleware:
    """Refuses a repeated single-valued query parameter under /v1 with a problem+json 400."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if not request.path.startswith("/v1/"):
            return None
        # Path ids: the URL patterns take any segment (apps/core/converters.py); one that is not
        # ASCII digits, or past 2^63-1 where no row can have it, is a 400 naming it.
        ids = [
            (camel(name) if name != "pk" else "id", value)
            for name, value in view_kwargs.items()
            if name in ("pk", "id") or name.endswith("_id")
        ]
        not_int = [
            name for name, value in ids if not (isinstance(value, int) or is_ascii_int(value))
        ]
        if not_int:
            return _problem([(name, "A valid integer is required.") for name in not_int], "invalid")
        too_big = [name for name, value in ids if int(value) > MAX_BIGINT]
        if too_big:
            return _problem([(name, f"At most {MAX_BIGINT}.") for name in too_big], "max_value")
        if "GET" not in request.__dict__:  # not read yet (WSGIRequest.GET is a cached_property)
            try:
                request.GET = query_dict(request)
            except TooManyFieldsSent as exc:  # the 400 a form with as many fields answers
                return problem_response(400, suspicious_request(exc))
        if not request.GET:
            return None
        # A NUL (`%00`) is no value any parameter takes, and PostgreSQL's text cannot hold one:
        # a lookup sent it to the database, whose DataError answered 503. The raw query string
        # says whether to look (a parameter's value has one only if it has `%00` or NUL).
        raw = request.META.get("QUERY_STRING", "")
        nul_sent = "%00" in raw or "\x00" in raw
        repeated = [name for name, values in request.GET.lists() if len(values) > 1]
        if not (nul_sent or repeated):
            return None
        taken = operation_query_parameters(view_func, request.method)
        if nul_sent:
            with_nul = [
                name
                for name, values in request.GET.lists()
                if name in taken and any("\x00" in value for value in values)
            ]
            if with_nul:
                return _problem([(name, NUL_MESSAGE) for name in with_nul], "invalid")
        refused = [name for name in repeated if taken.get(name) is False]
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
