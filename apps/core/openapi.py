"""Schema generation: problem+json errors, integer ids, and per operation only the error
statuses it can answer (contract section 13; schemathesis checks the claim)."""

from __future__ import annotations

import re

from drf_spectacular.utils import OpenApiParameter
from drf_standardized_errors.openapi import AutoSchema
from rest_framework.permissions import AllowAny
from rest_framework.serializers import ListField
from rest_framework.viewsets import GenericViewSet

from apps.core.camel_case import camel
from apps.core.params import MAX_BIGINT, QueryParameters
from apps.core.problems import PROBLEM_CONTENT_TYPE
from apps.core.viewsets import ScopedViewSet

WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
BODY_METHODS = {"POST", "PUT", "PATCH"}
_DOCUMENT_ITEM = re.compile(r"^/v1/documents/\{id\}/(client|policy)(/|$)")


def parameters_of(params_class: type[QueryParameters]) -> list[OpenApiParameter]:
    """The query parameters a QueryParameters class parses, as the schema shows them, so that
    what is documented is what is parsed: each field's `schema_type` and `help_text`, a list
    field as a repeatable parameter, and the one parameter of a one-name `one_of` as required."""
    return [
        OpenApiParameter(
            camel(name),
            getattr(field, "schema_type", str),
            description=field.help_text or "",
            many=isinstance(field, ListField),
            required=params_class.one_of == (name,),
        )
        for name, field in params_class().fields.items()
    ]


class ProblemAutoSchema(AutoSchema):
    def _get_response_for_code(
        self, serializer, status_code, media_types=None, direction="response"
    ):
        if str(status_code)[0] in "45":
            media_types = [PROBLEM_CONTENT_TYPE]
        return super()._get_response_for_code(serializer, status_code, media_types, direction)

    def _get_error_response_examples(self):
        # The library's examples show its own error format, not problem+json.
        return []

    def get_operation(self, *args, **kwargs):
        """The two modules of a document path share a view: keep their operation ids apart."""
        operation = super().get_operation(*args, **kwargs)
        match = _DOCUMENT_ITEM.match(self.path)
        if operation and match:
            base = re.sub(r"_\d+$", "", operation["operationId"])
            operation["operationId"] = f"{base}_{match[1]}"
        return operation

    def get_request_serializer(self):
        """The base viewset's PUT reads its input serializer as a partial update (only what is
        sent changes: `ScopedViewSet.update`), so its body is documented that way; an operation
        that takes no body (`takes_body = False`) documents none."""
        if not getattr(self.view, "takes_body", True):
            return None
        if isinstance(self.view, ScopedViewSet) and self.view.action == "update":
            return self.view.get_input_serializer_class()(partial=True)
        return super().get_request_serializer()

    def get_override_parameters(self):
        """A view's GET documents the query parameters its `params_class` parses."""
        parameters = super().get_override_parameters()
        params_class = getattr(self.view, "params_class", None)
        if params_class is not None and self.method == "GET":
            return [*parameters_of(params_class), *parameters]
        return parameters

    def _get_format_parameters(self):
        """`?format=` picks a renderer: the first is the default, and the others can be asked
        for by `Accept` as well."""
        parameters = super()._get_format_parameters()
        if parameters:  # there are two renderers or more
            default, *others = self.view.get_renderers()
            accept = ", ".join(f"`Accept: {renderer.media_type}`" for renderer in others)
            alternatives = " or ".join(renderer.format for renderer in others)
            for parameter in parameters:
                parameter["description"] = (
                    f"{default.format} (default) or {alternatives}; {accept} works too."
                )
        return parameters

    def _get_parameters(self):
        """Ids in paths are integers (1..2^63-1), as the URL patterns only accept digits."""
        parameters = super()._get_parameters()
        # A paged list's filter sent empty is the filter not given (apps.core.filters
        # ListFilterSet; tests/core/test_empty_params.py walks them): `allowEmptyValue`, so a
        # schema-driven client, the fuzzer too, knows `?deleted=` is allowed.
        paged = self.method == "GET" and self._is_list_view() and self._get_paginator()
        for parameter in parameters:
            taken_empty = parameter.get("name") not in ("page", "limit", "sort")
            if paged and parameter.get("in") == "query" and taken_empty:
                parameter["allowEmptyValue"] = True
        for parameter in parameters:
            name = parameter.get("name", "")
            if parameter.get("in") == "path" and (name in ("id", "pk") or name.endswith("_id")):
                parameter["schema"] = {"type": "integer", "minimum": 1, "maximum": MAX_BIGINT}
        return parameters

    # -- which error statuses an operation can answer --------------------------------------

    def _has_inputs(self) -> bool:
        return self.method in BODY_METHODS or bool(self._get_parameters())

    def _is_read_action(self) -> bool:
        return getattr(self.view, "action", None) == "search" or bool(
            getattr(self.view, "schema_read_only_post", False)
        )

    def _should_add_error_response(self, responses: dict, status_code: str) -> bool:
        if status_code in responses:
            return False
        method = self.method
        if status_code == "400":
            # A body, a query or a path parameter can be wrong.
            return self._has_inputs()
        if status_code == "404":
            return self._should_add_http404_error_response()
        if status_code == "405":
            # The operation's own method is offered; other methods are other operations.
            return False
        if status_code == "406":
            # Every view negotiates its representation from `Accept` before anything else: one
            # naming nothing it renders (`text/csv` on a JSON-only route) is a 406.
            return True
        if status_code == "409":
            permissions = self.view.get_permissions()
            open_to_all = bool(permissions) and all(isinstance(p, AllowAny) for p in permissions)
            return method in WRITE_METHODS and not self._is_read_action() and not open_to_all
        if status_code in ("413", "415"):
            return method in BODY_METHODS
        if status_code == "422":
            return bool(getattr(self.view, "schema_unprocessable", False)) and (
                method in WRITE_METHODS
            )
        if status_code == "503":
            return True  # the database or storage can be down for anyone
        return super()._should_add_error_response(responses, status_code)

    def _should_add_http404_error_response(self) -> bool:
        # A path id can name nothing visible; lookups by DOT, VIN, certificate number or a
        # referenced record answer 404 too. Scoped lists and creates answer 400 instead.
        if any(p["in"] == "path" for p in super()._get_parameters()):
            return True
        declared = getattr(self.view, "schema_may_404", None)
        if declared is not None:
            return bool(declared)
        if isinstance(self.view, GenericViewSet):
            return False
        permissions = self.view.get_permissions()
        return not (permissions and all(isinstance(p, AllowAny) for p in permissions))

    def _should_add_http403_error_response(self) -> bool:
        # A view that checks permissions inside (documents) says so; else the library decides
        # (no 403 for AllowAny, nor for IsAuthenticated alone: that one answers 401).
        declared = getattr(self.view, "schema_may_403", None)
        if declared is not None:
            return bool(declared)
        return super()._should_add_http403_error_response()
