"""A deleted client's documents (contract 4: deleted records leave lists; docs/api_intro.md).

A client document goes with its client: while the client is deleted, every route answers for
it exactly what it answers for a deleted document, and it comes back when the client is
restored. A policy document follows its policy: it stays live when its client is deleted (the
policy does), and goes with the policy when the policy itself is deleted.
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from tests.conftest import staff_member
from tests.factories import ClientFactory, PolicyFactory

pytestmark = pytest.mark.django_db
PDF = b"%PDF-1.4\n%deleted client\n"


def upload(api, module: str, owner_field: str, owner_id: int) -> dict:
    data = {"file": SimpleUploadedFile("coi.pdf", PDF), owner_field: owner_id}
    response = api.post(f"/v1/documents/{module}", data, format="multipart")
    assert response.status_code == 201, response.content
    return response.json()


def answer(response) -> tuple[int, str | None]:
    """What a caller learns: the status and, for an error, its detail."""
    detail = response.json().get("detail") if response.status_code >= 400 else None
    return response.status_code, detail


@pytest.fixture
def world(api, carrier):
    """The client's document, its policy's document, and a document deleted the ordinary way
    (of another live client) to compare with."""
    policy = PolicyFactory(client=carrier)
    bystander = ClientFactory(agency=carrier.agency, dot="2345678")
    gone = upload(api, "clients", "clientId", bystander.id)
    assert api.delete(f"/v1/documents/{gone['id']}/client").status_code == 204
    return {
        "client_doc": upload(api, "clients", "clientId", carrier.id),
        "policy_doc": upload(api, "policies", "policyId", policy.id),
        "policy": policy,
        "gone": gone,
    }


def set_deleted(api, carrier, deleted: bool) -> None:
    response = api.put(f"/v1/clients/{carrier.id}", {"deleted": deleted}, format="json")
    assert response.status_code == 200, response.content


def listed(api, query: str) -> list[int]:
    response = api.get(f"/v1/documents/{query}")
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def test_a_deleted_clients_documents_leave_both_lists(api, carrier, world):
    set_deleted(api, carrier, True)
    assert listed(api, f"clients?clientId={carrier.id}") == []
    assert listed(api, f"clients?dot={carrier.dot}") == []


def test_a_deleted_clients_document_downloads_as_a_deleted_one(api, carrier, world):
    client_doc, gone = world["client_doc"], world["gone"]
    set_deleted(api, carrier, True)
    assert answer(api.get(f"/v1/documents/{client_doc['id']}/client/download")) == answer(
        api.get(f"/v1/documents/{gone['id']}/client/download")
    )
    assert api.get(f"/v1/documents/{client_doc['id']}/client/download").status_code == 404


def test_a_link_issued_before_the_client_was_deleted_answers_as_for_a_deleted_document(
    api, carrier, world
):
    client_doc, gone = world["client_doc"], world["gone"]
    set_deleted(api, carrier, True)
    anonymous = APIClient()
    assert answer(anonymous.get(client_doc["downloadUrl"])) == answer(
        anonymous.get(gone["downloadUrl"])
    )
    assert anonymous.get(client_doc["downloadUrl"]).status_code == 404


def test_a_deleted_clients_document_is_replaced_and_deleted_as_a_deleted_one(api, carrier, world):
    client_doc, gone = world["client_doc"], world["gone"]
    set_deleted(api, carrier, True)

    def replace(document):
        file = {"file": SimpleUploadedFile("v2.pdf", PDF)}
        return api.put(f"/v1/documents/{document['id']}/client", file, format="multipart")

    assert answer(replace(client_doc)) == answer(replace(gone)) == (422, "The document is deleted.")
    deleting = api.delete(f"/v1/documents/{client_doc['id']}/client")
    assert answer(deleting) == answer(api.delete(f"/v1/documents/{gone['id']}/client"))
    assert answer(deleting) == (422, "The document is already deleted.")


def test_the_documents_come_back_with_the_client(api, carrier, world):
    client_doc = world["client_doc"]
    set_deleted(api, carrier, True)
    set_deleted(api, carrier, False)
    assert listed(api, f"clients?clientId={carrier.id}") == [client_doc["id"]]
    assert listed(api, f"clients?dot={carrier.dot}") == [client_doc["id"]]
    download = api.get(f"/v1/documents/{client_doc['id']}/client/download")
    assert download.status_code == 200
    link = APIClient().get(download.json()["downloadUrl"])
    assert b"".join(link.streaming_content) == PDF
    assert api.delete(f"/v1/documents/{client_doc['id']}/client").status_code == 204


def test_a_deleted_clients_policy_documents_stay_with_their_live_policy(api, carrier, world):
    policy_doc, policy = world["policy_doc"], world["policy"]
    set_deleted(api, carrier, True)
    assert listed(api, f"policies?policyId={policy.id}") == [policy_doc["id"]]
    download = api.get(f"/v1/documents/{policy_doc['id']}/policy/download")
    assert download.status_code == 200
    assert b"".join(APIClient().get(download.json()["downloadUrl"]).streaming_content) == PDF
    assert b"".join(APIClient().get(policy_doc["downloadUrl"]).streaming_content) == PDF


def test_the_admin_treats_a_deleted_clients_document_as_deleted(
    client, api, carrier, world, groups, agency
):
    client_doc, policy_doc = world["client_doc"], world["policy_doc"]
    set_deleted(api, carrier, True)
    client.force_login(staff_member([agency], groups))
    download = f"/admin/documents/document/{client_doc['id']}/download/"
    assert client.get(download).status_code == 404
    live_list = client.get("/admin/documents/document/").content.decode()
    assert f"/admin/documents/document/{client_doc['id']}/change/" not in live_list
    assert f"/admin/documents/document/{policy_doc['id']}/change/" in live_list
    page = client.get(f"/admin/documents/document/{client_doc['id']}/change/").content.decode()
    assert "— (deleted)" in page and download not in page
    set_deleted(api, carrier, False)
    assert client.get(download).status_code == 200


def set_policy_deleted(api, policy, deleted: bool) -> None:
    response = api.put(f"/v1/policies/{policy.id}", {"deleted": deleted}, format="json")
    assert response.status_code == 200, response.content


def test_a_deleted_policys_documents_answer_as_deleted_ones_and_come_back_with_it(
    api, carrier, world
):
    policy_doc, policy, gone = world["policy_doc"], world["policy"], world["gone"]
    set_policy_deleted(api, policy, True)
    assert listed(api, f"policies?policyId={policy.id}") == []
    download = api.get(f"/v1/documents/{policy_doc['id']}/policy/download")
    assert answer(download) == answer(api.get(f"/v1/documents/{gone['id']}/client/download"))
    assert download.status_code == 404
    assert APIClient().get(policy_doc["downloadUrl"]).status_code == 404
    file = {"file": SimpleUploadedFile("v2.pdf", PDF)}
    replaced = api.put(f"/v1/documents/{policy_doc['id']}/policy", file, format="multipart")
    assert answer(replaced) == (422, "The document is deleted.")
    deleting = api.delete(f"/v1/documents/{policy_doc['id']}/policy")
    assert answer(deleting) == (422, "The document is already deleted.")

    set_policy_deleted(api, policy, False)
    assert listed(api, f"policies?policyId={policy.id}") == [policy_doc["id"]]
    assert b"".join(APIClient().get(policy_doc["downloadUrl"]).streaming_content) == PDF


def test_the_admins_deleted_only_list_shows_a_document_gone_with_its_owner(
    client, api, carrier, world, groups, agency
):
    client_doc, policy_doc, gone = world["client_doc"], world["policy_doc"], world["gone"]
    set_deleted(api, carrier, True)
    set_policy_deleted(api, world["policy"], True)
    client.force_login(staff_member([agency], groups))
    deleted_only = client.get("/admin/documents/document/?record=deleted").content.decode()
    for document in (client_doc, policy_doc, gone):
        assert f"/admin/documents/document/{document['id']}/change/" in deleted_only
    set_deleted(api, carrier, False)
    set_policy_deleted(api, world["policy"], False)
    deleted_only = client.get("/admin/documents/document/?record=deleted").content.decode()
    assert f"/admin/documents/document/{client_doc['id']}/change/" not in deleted_only
    assert f"/admin/documents/document/{gone['id']}/change/" in deleted_only
