"""Contract section 1: an exact OpenAPI document with both security schemes required together."""

from __future__ import annotations

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db

TOKEN_ROUTES = {"/v1/auth/token", "/v1/auth/token/refresh"}


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    from drf_spectacular.generators import SchemaGenerator

    with django_db_blocker.unblock():
        return SchemaGenerator().get_schema(request=None, public=True)


def test_schema_validates_without_warnings(tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "s.yml"))


def test_every_operation_requires_api_key_and_bearer_together(schema):
    schemes = schema["components"]["securitySchemes"]
    assert schemes["apiKey"] == {"type": "apiKey", "in": "header", "name": "apiKey"}
    assert schemes["bearerAuth"]["scheme"] == "bearer"
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            expected = (
                [{"apiKey": []}] if path in TOKEN_ROUTES else [{"apiKey": [], "bearerAuth": []}]
            )
            assert operation["security"] == expected, (method, path)


def test_every_operation_declares_problem_errors(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            errors = [status for status in operation["responses"] if status[0] in "45"]
            assert {"401", "500"} <= set(errors), (method, path)
            for status in errors:  # only those it can answer (contract section 13)
                content = operation["responses"][status]["content"]
                assert list(content) == ["application/problem+json"], (method, path, status)
