"""A view's documented query parameters are the ones its `params_class` parses (issue 14): the
OpenAPI document cannot list a parameter the view ignores, nor miss one it reads."""

from __future__ import annotations

import pytest
from rest_framework.serializers import ListField

from apps.core.camel_case import camel
from apps.core.query_params import params_class_parameters

pytestmark = pytest.mark.django_db

PARAMS_VIEWS = {
    "CertificateCheckView",
    "ClientCertificateView",
    "VehicleCertificateView",
    "ClientVerificationView",
    "VehicleVerificationView",
    "ClientDocumentsView",
    "PolicyDocumentsView",
    "EventFeedView",
}


@pytest.fixture(scope="module")
def operations(django_db_blocker):
    """(view, its GET operation, the query parameters drf-spectacular adds on its own: paging,
    sorting, `format`) for every view with a `params_class`."""
    from drf_spectacular.generators import SchemaGenerator

    generator = SchemaGenerator()
    found = []
    with django_db_blocker.unblock():
        generator._initialise_endpoints()
        for path, path_regex, method, view in generator._get_paths_and_endpoints():
            if method != "GET" or getattr(view, "params_class", None) is None:
                continue
            schema = view.schema
            operation = schema.get_operation(path, path_regex, "^/", method, generator.registry)
            own = [
                *schema._get_filter_parameters(),
                *schema._get_pagination_parameters(),
                *schema._get_format_parameters(),
            ]
            found.append((view, operation, {parameter["name"] for parameter in own}))
    return found


def query_parameters(operation) -> dict[str, dict]:
    return {p["name"]: p for p in operation.get("parameters", []) if p["in"] == "query"}


def test_every_view_with_a_params_class_is_checked(operations):
    assert {type(view).__name__ for view, _, _ in operations} == PARAMS_VIEWS


def test_documented_query_parameters_are_the_parsed_ones(operations):
    for view, operation, libraries in operations:
        fields = view.params_class().fields
        parsed = {camel(name) for name in fields}
        documented = query_parameters(operation)
        assert not parsed & libraries, type(view).__name__
        assert set(documented) - libraries == parsed, type(view).__name__
        for name, field in fields.items():
            parameter = documented[camel(name)]
            assert parameter.get("description", "") == (field.help_text or ""), name
            is_list = isinstance(field, ListField)
            assert (parameter["schema"]["type"] == "array") == is_list, name
            assert parameter.get("required", False) == (view.params_class.one_of == (name,))


def repeatable(view) -> set[str]:
    return {name for name, repeats in params_class_parameters(view.params_class).items() if repeats}


def test_only_list_parameters_may_repeat(operations):
    for view, _, _ in operations:
        lists = {
            camel(name)
            for name, field in view.params_class().fields.items()
            if isinstance(field, ListField)
        }
        assert repeatable(view) == lists, type(view).__name__
    names = {type(view).__name__: repeatable(view) for view, _, _ in operations}
    assert names["ClientVerificationView"] == {"dots"}
    assert names["EventFeedView"] == {"type"}
