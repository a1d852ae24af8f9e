"""The one base viewset: scoping, permissions, paging, sorting, service-backed writes."""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction
from django.db.models import Model, QuerySet
from django.http import QueryDict
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.generics import get_object_or_404
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.viewsets import GenericViewSet

from apps.core.camel_case import camel
from apps.core.converters import ID_SEGMENT
from apps.core.filters import json_value_refusal
from apps.core.pagination import DEFAULT_LIMIT, MAX_LIMIT, Page
from apps.core.params import parse_positive_int
from apps.core.prepared import record_by_key
from apps.core.query_params import filterset_parameters
from apps.core.serializers import ShapedSerializer, StrictCharField, StrictIntegerField
from apps.core.sorting import order_by_for, reversed_term, sort_fields_of


class ScopedViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, GenericViewSet):
    """Lists and details always start from `selector(user=...)`, which applies agency scoping.

    Subclasses declare: `selector`, `serializer_class` (output), `create_service`,
    `update_service`, `filterset_class`, `sort_fields`; `input_serializer_class` when the
    body is not read by `serializer_class`; `detail_selector` and `detail_serializer_class`
    when one record (read, created or updated) shows more than a list row.
    PUT is a partial update, as the spec says: only present properties change (the schema
    says so too: `ProblemAutoSchema` documents its body as the partial input serializer).
    """

    selector: Callable[..., QuerySet]
    detail_selector: Callable[..., QuerySet] | None = None
    detail_serializer_class: type[serializers.Serializer] | None = None
    input_serializer_class: type[serializers.Serializer] | None = None
    create_service: Callable[..., Model] | None = None
    update_service: Callable[..., Model] | None = None
    http_method_names = ["get", "post", "put", "head", "options"]
    # Any segment: one that is not an integer is a 400 (apps/core/converters.py).
    lookup_value_regex = ID_SEGMENT
    # The actions that answer one record: with `detail_*` declared, they read and show it whole.
    detail_actions = ("retrieve", "create", "update")
    # An action that takes no body says so (`@action(..., takes_body=False)`): the OpenAPI
    # document shows none, and a body of a type other than JSON is a 415 (apps.core.request_bodies).
    takes_body = True

    def _shows_detail(self) -> bool:
        return getattr(self, "action", None) in self.detail_actions

    def get_queryset(self) -> QuerySet:
        if self.detail_selector is not None and self._shows_detail():
            return type(self).detail_selector(user=self.request.user)
        return type(self).selector(user=self.request.user)

    def get_serializer_class(self):
        if self.detail_serializer_class is not None and self._shows_detail():
            return self.detail_serializer_class
        return super().get_serializer_class()

    def get_input_serializer_class(self) -> type[serializers.Serializer]:
        return self.input_serializer_class or self.serializer_class

    def get_object(self) -> Model:
        """Details ignore list filters (a soft-deleted record stays reachable by id)."""
        pk = self.kwargs[self.lookup_field]
        obj = record_by_key(self.get_queryset(), lambda records: get_object_or_404(records, pk=pk))
        self.check_object_permissions(self.request, obj)
        return obj

    def get_input_serializer(self, *args, **kwargs):
        kwargs.setdefault("context", self.get_serializer_context())
        return self.get_input_serializer_class()(*args, **kwargs)

    def render_object(self, obj: Model, *, status_code: int = status.HTTP_200_OK, **headers):
        """Re-read the object through the scoped selector so the output has every relation."""
        fresh = record_by_key(self.get_queryset(), lambda records: records.get(pk=obj.pk))
        return Response(self.get_serializer(fresh).data, status=status_code, headers=headers)

    def create(self, request, *args, **kwargs):
        serializer = self.get_input_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        with transaction.atomic():  # a broken uniqueness rule: 409 from the problem handler
            obj = type(self).create_service(user=request.user, **serializer.validated_data)
        location = reverse(f"{self.basename}-detail", kwargs={"pk": obj.pk}, request=request)
        return self.render_object(obj, status_code=status.HTTP_201_CREATED, Location=location)

    def update(self, request, *args, **kwargs):
        instance = self.get_object()
        serializer = self.get_input_serializer(instance, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        with transaction.atomic():
            obj = type(self).update_service(
                user=request.user, instance=instance, **serializer.validated_data
            )
        return self.render_object(obj)


class LegacySearchRequestSerializer(serializers.Serializer):
    """The legacy paging body; every part is optional."""

    page_index = StrictIntegerField(required=False, default=1, min_value=1, max_value=10**7)
    page_size = StrictIntegerField(
        required=False, default=DEFAULT_LIMIT, min_value=1, max_value=MAX_LIMIT
    )
    sort_by = StrictCharField(required=False, allow_blank=True, default="", max_length=200)
    sort_order = serializers.ChoiceField(
        choices=["asc", "desc", "ASC", "DESC"], required=False, default="asc"
    )
    filter = serializers.DictField(required=False, default=dict)


# The legacy search answer: one page of rendered items and its paging. Its fields are declared
# per item serializer by `legacy_search_page` (the page's schema names its items' type).
class LegacySearchPageSerializer(ShapedSerializer):
    @staticmethod
    def shape(page: Page, items: list) -> dict:
        return {
            "items": items,
            "total_count": page.count,
            "page_index": page.page,
            "page_size": page.limit,
        }


def legacy_search_page(
    item_serializer: type[serializers.Serializer], name: str
) -> type[LegacySearchPageSerializer]:
    """The page serializer named `name` whose items are `item_serializer`'s (schema and tests)."""
    fields = {
        "items": item_serializer(many=True),
        "total_count": serializers.IntegerField(),
        "page_index": serializers.IntegerField(),
        "page_size": serializers.IntegerField(),
    }
    return type(name, (LegacySearchPageSerializer,), fields)


def legacy_search_schema(item_serializer: type[serializers.Serializer], name: str):
    """The OpenAPI description of a legacy search action answering `item_serializer` items."""
    return extend_schema(
        request=LegacySearchRequestSerializer,
        responses=legacy_search_page(item_serializer, name)(),
    )


class LegacySearchMixin:
    """`POST .../search` with {pageIndex, pageSize, sortBy, sortOrder, filter}.

    Runs the same selector, filterset and ordering as the GET list, so the two agree.
    """

    @action(detail=False, methods=["post"], url_path="search")
    def search(self, request, *args, **kwargs):
        body = LegacySearchRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        page = parse_positive_int(data["page_index"], field="pageIndex", default=1, maximum=10**7)
        limit = parse_positive_int(
            data["page_size"], field="pageSize", default=DEFAULT_LIMIT, maximum=MAX_LIMIT
        )
        params = QueryDict(mutable=True)
        filterset_class = getattr(self, "filterset_class", None)
        declared = filterset_class.base_filters if filterset_class is not None else {}
        taken = filterset_parameters(filterset_class) if filterset_class is not None else {}
        refused, repeated = {}, {}
        for key, value in (data["filter"] or {}).items():
            key = camel(key)
            values = value if isinstance(value, list) else [value]
            if key in declared and value is not None:
                # Each value in a JSON type its GET parameter's text can stand for.
                refusal = next(
                    filter(None, (json_value_refusal(declared[key], v) for v in values)), None
                )
                if refusal:
                    refused[f"filter.{key}"] = refusal
                    continue
            if isinstance(value, list):
                # Several values where the GET list takes one parameter once: refused as it
                # refuses the parameter sent twice, never the last value taken silently. A
                # name the list does not filter on is ignored, as the GET list ignores it.
                if len(value) > 1 and taken.get(key) is False:
                    repeated[f"filter.{key}"] = "Send this parameter once."
                params.setlist(key, [_param(v) for v in value])
            elif value is not None:
                params[key] = _param(value)
        if refused:
            raise ValidationError(refused, code="invalid")
        if repeated:
            raise ValidationError(repeated, code="repeated")
        queryset = self.get_queryset()
        if filterset_class is not None:
            filterset = filterset_class(params, queryset=queryset, request=request)
            if not filterset.is_valid():
                raise ValidationError(
                    {f"filter.{camel(k)}": v for k, v in filterset.errors.items()}
                )
            try:
                queryset = filterset.qs
            except ValidationError as exc:  # a filter's own check, named as the body names it
                if not isinstance(exc.detail, dict):
                    raise
                raise ValidationError(
                    {f"filter.{camel(k)}": v for k, v in exc.detail.items()}
                ) from None
        sort = data["sort_by"].strip()
        try:
            terms = order_by_for(sort, sort_fields_of(self), getattr(self, "default_sort", ("id",)))
        except ValidationError:
            raise ValidationError({"sortBy": [f"Cannot sort by '{data['sort_by']}'."]}) from None
        if data["sort_order"].lower() == "desc":
            # The order read as GET's `sort` would read it, then every term reversed, the
            # tie-break by id too: "-lastName" with "desc" is ascending, "+lastName" and each
            # key of "lastName, firstName" descending, no sortBy the default order reversed.
            terms = [reversed_term(term) for term in terms]
        result = Page(queryset.order_by(*terms), page=page, limit=limit)
        items = self.get_serializer(result.rows, many=True).data
        return Response(LegacySearchPageSerializer.shape(result, items))


def _param(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
