"""Generic API test cases (NetBox's APIViewTestCases as the model).

A resource's test class declares what differs (its path, how to make one of its records for
an agency, a valid create body, a valid change) and inherits the behaviour every resource
owes: authentication, permissions, agency isolation, paging, problem+json errors, Location on
create, 405 with Allow. Each test is one behaviour, named for it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rest_framework.test import APIClient

from tests.conftest import assert_problem, bearer_for


class APIResourceCases:
    path: ClassVar[str]  # "/v1/clients"
    allowed_on_detail: ClassVar[set[str]] = {"GET", "PUT"}
    # Fields the create answer shows once and the detail never does (a webhook's secret).
    shown_once: ClassVar[set[str]] = set()

    def make(self, agency):
        """A record of this resource belonging to `agency`."""
        raise NotImplementedError

    def create_body(self, agency) -> dict[str, Any]:
        """A valid create request for a record of `agency` (camelCase)."""
        raise NotImplementedError

    def update_body(self) -> dict[str, Any]:
        """A valid partial change; every key must read back with the same value."""
        raise NotImplementedError

    # --- authentication ----------------------------------------------------------------

    def test_list_without_api_key_is_401(self, manager, api_key):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer_for(manager)}")
        assert_problem(client.get(self.path), 401)

    def test_list_without_bearer_is_401_with_www_authenticate(self, make_api):
        response = make_api().get(self.path)
        assert_problem(response, 401)
        assert response.has_header("WWW-Authenticate")

    # --- permissions -------------------------------------------------------------------

    def test_list_without_view_permission_is_403(self, make_api, powerless):
        assert_problem(make_api(powerless).get(self.path), 403)

    def test_create_without_add_permission_is_403(self, viewer_api, agency):
        assert_problem(viewer_api.post(self.path, self.create_body(agency), format="json"), 403)

    def test_update_without_change_permission_is_403(self, viewer_api, agency):
        record = self.make(agency)
        response = viewer_api.put(f"{self.path}/{record.pk}", self.update_body(), format="json")
        assert_problem(response, 403)

    # --- isolation ---------------------------------------------------------------------

    def test_list_shows_the_callers_agency_only(self, api, agency, other_agency):
        mine, theirs = self.make(agency), self.make(other_agency)
        ids = [item["id"] for item in api.get(f"{self.path}?limit=200").json()["results"]]
        assert mine.pk in ids and theirs.pk not in ids

    def test_detail_of_another_agency_is_404_like_a_missing_one(self, api, other_agency):
        theirs = self.make(other_agency)
        other = assert_problem(api.get(f"{self.path}/{theirs.pk}"), 404)
        missing = assert_problem(api.get(f"{self.path}/{theirs.pk + 10_000}"), 404)
        assert other["detail"] == missing["detail"]

    def test_update_of_another_agency_is_404_and_changes_nothing(self, api, other_agency):
        theirs = self.make(other_agency)
        before = type(theirs).objects.filter(pk=theirs.pk).values().get()
        response = api.put(f"{self.path}/{theirs.pk}", self.update_body(), format="json")
        assert_problem(response, 404)
        assert type(theirs).objects.filter(pk=theirs.pk).values().get() == before

    # --- reads and writes --------------------------------------------------------------

    def test_list_is_paged(self, api, agency):
        self.make(agency)
        body = api.get(f"{self.path}?limit=1").json()
        assert set(body) == {"count", "page", "limit", "totalPages", "results"}
        assert (body["page"], body["limit"], len(body["results"])) == (1, 1, 1)

    def test_detail_reads_the_record(self, api, agency):
        record = self.make(agency)
        response = api.get(f"{self.path}/{record.pk}")
        assert response.status_code == 200
        assert response.json()["id"] == record.pk

    def test_create_is_201_with_location_of_the_new_record(self, api, agency):
        response = api.post(self.path, self.create_body(agency), format="json")
        assert response.status_code == 201, response.content
        created = response.json()
        assert response["Location"].endswith(f"{self.path}/{created['id']}")
        assert self.shown_once <= set(created)
        detail = api.get(f"{self.path}/{created['id']}").json()
        assert detail == {k: v for k, v in created.items() if k not in self.shown_once}

    def test_update_changes_what_it_names(self, api, agency):
        record = self.make(agency)
        change = self.update_body()
        response = api.put(f"{self.path}/{record.pk}", change, format="json")
        assert response.status_code == 200, response.content
        read = api.get(f"{self.path}/{record.pk}").json()
        assert {key: read[key] for key in change} == change

    def test_create_with_a_malformed_body_is_400(self, api):
        assert_problem(api.post(self.path, "[1, 2]", content_type="application/json"), 400)

    def test_create_with_another_media_type_is_415(self, api):
        assert_problem(api.post(self.path, "<x/>", content_type="application/xml"), 415)

    def test_a_method_the_detail_does_not_offer_is_405_with_allow(self, api, agency):
        record = self.make(agency)
        offered = self.allowed_on_detail
        method = next(m for m in ("DELETE", "PATCH", "POST") if m not in offered)
        response = api.generic(method, f"{self.path}/{record.pk}")
        assert_problem(response, 405)
        assert offered <= {m.strip() for m in response["Allow"].split(",")}
