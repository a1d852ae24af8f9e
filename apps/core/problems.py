"""RFC 9457 problem details for every error under /v1, built on drf-standardized-errors."""

from __future__ import annotations

import functools
import logging

from django.apps import apps as django_apps
from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import (
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DatabaseError, IntegrityError
from django.db.models import UniqueConstraint
from django.http import Http404, JsonResponse
from drf_standardized_errors.formatter import ExceptionFormatter, flatten_errors
from drf_standardized_errors.handler import ExceptionHandler
from rest_framework import exceptions, serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error

from apps.core.camel_case import camel
from apps.core.exceptions import Conflict, PayloadTooLarge, ServiceUnavailable, WriteConflict
from apps.core.models import unique_violations
from apps.core.problem_json import PROBLEM_CONTENT_TYPE, problem_body
from apps.core.renderers import CamelCaseJSONRenderer


def problem_response(status: int, detail: str, headers: dict | None = None) -> JsonResponse:
    """A problem+json response outside DRF (middleware, plain Django views). It says its length:
    one a middleware answers before CommonMiddleware would have added it (a body refused
    unread, apps.core.request_bodies) went out chunked or closing the connection."""
    response = JsonResponse(problem_body(status, detail), status=status)
    response["Content-Type"] = PROBLEM_CONTENT_TYPE
    response["Content-Length"] = str(len(response.content))
    for key, value in (headers or {}).items():
        response[key] = value
    return response


def suspicious_request(exc: SuspiciousOperation) -> str:
    """The 400's detail for a request Django refused as suspicious (too many fields or files
    in a query string or a multipart body, ...), logged where Django logs it
    (`django.security.<name>`). Django answers these 400 outside a view; raised inside one
    (DRF parses the body there), they must not become a 500."""
    logging.getLogger(f"django.security.{type(exc).__name__}").error(str(exc))
    if isinstance(exc, TooManyFieldsSent):
        return f"Too many fields: at most {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} are accepted."
    if isinstance(exc, TooManyFilesSent):
        return f"Too many files: at most {settings.DATA_UPLOAD_MAX_NUMBER_FILES} are accepted."
    return "The request is malformed."


class ProblemFormatter(ExceptionFormatter):
    """Turns any DRF exception into {type, title, status, detail, errors}."""

    def run(self) -> dict:
        status = self.exc.status_code
        if isinstance(self.exc, exceptions.ValidationError):
            errors = [
                {
                    "field": None if e.attr in (None, "non_field_errors") else camel(e.attr),
                    "message": e.detail,
                    "code": e.code,
                }
                for e in flatten_errors(self.exc.detail)
            ]
            parts = [
                f"{e['field']}: {e['message']}" if e["field"] else e["message"] for e in errors
            ]
            detail = "; ".join(parts) or "Invalid input."
            return problem_body(status, detail, errors)
        detail = self.exc.detail
        if isinstance(detail, dict):
            detail = detail.get("detail") or next(iter(detail.values()), "")
        if isinstance(detail, list):
            detail = detail[0] if detail else ""
        return problem_body(status, str(detail))


RACE_MESSAGE = "The request conflicts with an existing record."


@functools.cache
def _unique_messages() -> dict[str, str]:
    """Each UniqueConstraint's message, under its name (PostgreSQL names the constraint) and
    under its columns (SQLite names them): `table.column, table.column`."""
    messages: dict[str, str] = {}
    for model in django_apps.get_models():
        table = model._meta.db_table
        for constraint in model._meta.constraints:
            if not isinstance(constraint, UniqueConstraint) or not constraint.fields:
                continue
            message = constraint.get_violation_error_message()
            if constraint.violation_error_message == constraint.default_violation_error_message:
                continue  # no message of its own
            if "{" in message:
                continue  # it names the record's values, which a database error does not carry
            columns = ", ".join(
                f"{table}.{model._meta.get_field(name).column}" for name in constraint.fields
            )
            messages[constraint.name] = messages[columns] = message
    return messages


def race_message(exc: IntegrityError) -> str:
    """The broken rule's own message when the database error names it, else a general one."""
    text = str(exc)
    for key, message in _unique_messages().items():
        if f'"{key}"' in text or text.endswith(f"failed: {key}"):
            return message
    return RACE_MESSAGE


# PostgreSQL's deadlock_detected and serialization_failure: apps.core.exceptions.WriteConflict.
WRITE_CONFLICTS = {"40P01", "40001"}


class ProblemResponse(Response):
    """An error answer: problem+json JSON whatever representation the view negotiated (a PDF
    certificate, the YAML schema, the Swagger UI page), never a body in another format under
    the problem+json type."""

    @property
    def rendered_content(self):
        if not isinstance(getattr(self, "accepted_renderer", None), JSONRenderer):
            self.accepted_renderer = CamelCaseJSONRenderer()
            self.accepted_media_type = PROBLEM_CONTENT_TYPE
        return super().rendered_content


class ProblemExceptionHandler(ExceptionHandler):
    """Maps Django and database exceptions to their HTTP meaning before formatting."""

    def convert_known_exceptions(self, exc: Exception) -> Exception:
        if isinstance(exc, DjangoValidationError):
            broken = unique_violations(exc)
            if broken:  # a uniqueness rule found by full_clean(): 409, whatever else failed
                return Conflict(broken[0])
            return exceptions.ValidationError(detail=as_serializer_error(exc))
        if isinstance(exc, IntegrityError):  # a race that only the database caught
            return Conflict(race_message(exc))
        if isinstance(exc, RequestDataTooBig):
            return PayloadTooLarge()
        if isinstance(exc, SuspiciousOperation):
            return exceptions.ParseError(suspicious_request(exc))
        if isinstance(exc, DatabaseError):
            if getattr(exc.__cause__, "sqlstate", None) in WRITE_CONFLICTS:
                return WriteConflict()
            return ServiceUnavailable("The database is unavailable; try again shortly.")
        if isinstance(exc, DjangoPermissionDenied):
            return exceptions.PermissionDenied(str(exc) or None)
        if isinstance(exc, Http404):
            return exceptions.NotFound()
        return super().convert_known_exceptions(exc)

    def get_response(self, exc: exceptions.APIException, data: dict) -> Response:
        return ProblemResponse(
            data,
            status=exc.status_code,
            headers=self.get_headers(exc),
            content_type=PROBLEM_CONTENT_TYPE,
        )


class ProblemErrorSerializer(serializers.Serializer):
    field = serializers.CharField(allow_null=True, help_text="The request field, in camelCase.")
    message = serializers.CharField()
    code = serializers.CharField()


class ProblemSerializer(serializers.Serializer):
    """RFC 9457 problem details."""

    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField()
    errors = ProblemErrorSerializer(many=True)
