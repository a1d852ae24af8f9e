"""Staff upload and delete documents in the back-office (`/admin/documents/document/upload/`,
the documents list's action) through the services the API calls: the same owner, size, type and
permission rules, the same stored file and the same `document.uploaded|deleted` events; another
agency's client, policy or document is not offered and not touched, and a refused upload stores
nothing."""

from __future__ import annotations

import hashlib

import pytest
from django.contrib.auth.models import Permission
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.core.request_bodies import MAX_FILE_BYTES
from apps.documents.models import Document
from apps.documents.services import document_upload
from apps.events.models import Event
from tests.conftest import staff_member
from tests.documents.test_api import PDF, stored_files
from tests.factories import PolicyFactory, UserFactory

pytestmark = pytest.mark.django_db
URL = "/admin/documents/document/upload/"


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


def send(browser, content=PDF, name="coi.pdf", **fields):
    return browser.post(URL, {"file": SimpleUploadedFile(name, content), **fields})


def test_a_client_document_is_stored_as_the_api_stores_it(staff_client, carrier, settings):
    page = staff_client.get(URL, {"client": carrier.pk})
    assert page.status_code == 200
    assert f'<option value="{carrier.pk}" selected>' in page.content.decode()
    assert '<a href="/admin/documents/document/">Documents</a>\n&rsaquo; Upload a document' in (
        page.content.decode()
    )

    response = send(staff_client, client=carrier.pk, description="Certificate from the broker")
    assert response.status_code == 302
    assert response["Location"] == f"/admin/clients/client/{carrier.pk}/change/"
    document = Document.objects.get()
    assert (document.module, document.client, document.policy) == ("client", carrier, None)
    assert document.content_type == "application/pdf"
    assert document.sha256 == hashlib.sha256(PDF).hexdigest()
    assert document.description == "Certificate from the broker"
    assert document.uploaded_by == staff_client.user
    assert [p.read_bytes() for p in stored_files(settings)] == [PDF]
    event = Event.objects.get(type="document.uploaded")
    assert (event.client_id, event.data["id"]) == (carrier.pk, document.pk)
    shown = staff_client.get(response["Location"]).content.decode()
    assert "Uploaded coi.pdf (application/pdf) to Lone Star Freight" in shown


def test_a_policy_document_follows_its_policy(staff_client, carrier):
    policy = PolicyFactory(client=carrier)
    response = send(staff_client, policy=policy.pk)
    assert response["Location"] == f"/admin/policies/policy/{policy.pk}/change/"
    document = Document.objects.get()
    assert (document.module, document.client, document.policy) == ("policy", carrier, policy)


def test_the_owner_pages_offer_the_upload(staff_client, carrier):
    policy = PolicyFactory(client=carrier)
    client_page = staff_client.get(f"/admin/clients/client/{carrier.pk}/change/").content
    assert f'{URL}?client={carrier.pk}"'.encode() in client_page
    policy_page = staff_client.get(f"/admin/policies/policy/{policy.pk}/change/").content
    assert f'{URL}?policy={policy.pk}"'.encode() in policy_page
    assert f'href="{URL}"'.encode() in staff_client.get("/admin/documents/document/").content


def test_another_agencys_client_or_policy_is_refused_and_nothing_stored(
    staff_client, rival, settings
):
    rival_policy = PolicyFactory(client=rival, policy_number="RIVAL-POL-77")
    page = staff_client.get(URL, {"client": rival.pk, "policy": rival_policy.pk})
    assert page.status_code == 200
    assert "Rival Transport" not in page.content.decode()
    assert "RIVAL-POL-77" not in page.content.decode()
    for owner in ({"client": rival.pk}, {"policy": rival_policy.pk}):
        response = send(staff_client, **owner)
        assert response.status_code == 400
        assert "Select a valid choice" in response.content.decode()
    assert not Document.objects.exists()
    assert stored_files(settings) == []
    assert not Event.objects.filter(type="document.uploaded").exists()


@pytest.mark.parametrize(
    ("fields", "content", "name", "message"),
    [
        ({}, PDF, "coi.pdf", "Choose a client or a policy, not both."),
        ({"policy": True}, PDF, "coi.pdf", "Choose a client or a policy, not both."),
        ({}, b"<html><script>x</script></html>", "page.pdf", "The file is text/html; accepted"),
        ({}, b"", "empty.pdf", "The file is empty."),
    ],
    ids=["no-owner", "both-owners", "html-as-pdf", "empty"],
)
def test_a_refused_upload_says_why_and_stores_nothing(
    staff_client, carrier, settings, fields, content, name, message
):
    policy = PolicyFactory(client=carrier)
    owner = {} if fields == {} and message.startswith("Choose") else {"client": carrier.pk}
    if fields.get("policy"):
        owner = {"client": carrier.pk, "policy": policy.pk}
    response = send(staff_client, content=content, name=name, **owner)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert "ErrorDetail" not in response.content.decode()  # the message, not a repr
    assert not Document.objects.exists()
    assert stored_files(settings) == []


def test_a_file_past_25_mib_is_refused_before_it_is_stored(staff_client, carrier, settings):
    big = b"%PDF" + b"0" * (MAX_FILE_BYTES - 3)
    response = send(staff_client, content=big, client=carrier.pk)
    assert response.status_code == 413
    assert "The file is larger than" in response.content.decode()
    assert not Document.objects.exists()
    assert stored_files(settings) == []


def test_a_deleted_client_takes_no_document(staff_client, carrier, settings):
    carrier.deleted = True
    carrier.save()
    response = send(staff_client, client=carrier.pk)
    assert response.status_code == 400
    assert not Document.objects.exists()


def test_staff_without_the_document_permission_cannot_open_it(client, groups, agency, carrier):
    viewer = staff_member([agency], groups, "reader", group=1)  # the read-only group
    client.force_login(viewer)
    assert client.get(URL).status_code == 403
    assert send(client, client=carrier.pk).status_code == 403
    assert not Document.objects.exists()


def test_the_upload_checks_the_csrf_token(client, staff, carrier):
    client.handler.enforce_csrf_checks = True
    client.force_login(staff)
    assert send(client, client=carrier.pk).status_code == 403
    assert not Document.objects.exists()


# Deletion: the documents list's action, through the API's delete service.


def stored(user, owner, module="client", content=PDF, name="old-coi.pdf"):
    return document_upload(
        user=user,
        module=module,
        owner_id=owner.pk,
        file=ContentFile(content, name=name),
        sha256=hashlib.sha256(content).hexdigest(),
    )


def act(browser, documents, **extra):
    return browser.post(
        "/admin/documents/document/",
        {"action": "delete_documents", "_selected_action": [d.pk for d in documents], **extra},
    )


def test_staff_delete_documents_after_a_confirmation(
    staff_client, carrier, settings, django_capture_on_commit_callbacks
):
    policy = PolicyFactory(client=carrier, policy_number="DEC-1")
    documents = [
        stored(staff_client.user, carrier),
        stored(staff_client.user, policy, "policy", name="dec.pdf"),
    ]
    assert len(stored_files(settings)) == 2

    page = act(staff_client, documents)
    assert page.status_code == 200
    body = page.content.decode()
    assert "old-coi.pdf" in body and "dec.pdf" in body and "cannot be undone" in body
    assert Document.objects.live().count() == 2  # asked first, nothing done

    with django_capture_on_commit_callbacks(execute=True):  # the files go at the commit
        response = act(staff_client, documents, confirm="yes")
    assert response.status_code == 302
    assert not Document.objects.live().exists()
    assert stored_files(settings) == []
    assert Event.objects.filter(type="document.deleted").count() == 2
    listed = staff_client.get(response["Location"]).content.decode()
    assert "Deleted 2 record(s)." in listed

    again = act(staff_client, documents, confirm="yes")  # already deleted: said, not a 500
    assert again.status_code == 302
    messages = staff_client.get(again["Location"]).content.decode()
    assert "Deleted 2 record(s)." not in messages


def test_another_agencys_document_is_not_deleted(staff_client, other_manager, rival, settings):
    rival_document = stored(other_manager, rival)
    response = act(staff_client, [rival_document], confirm="yes")
    assert response.status_code == 302
    assert "Nothing was done" in staff_client.get(response["Location"]).content.decode()
    rival_document.refresh_from_db()
    assert rival_document.live
    assert len(stored_files(settings)) == 1


def test_deletion_needs_the_module_delete_permission(client, groups, agency, carrier, settings):
    viewer = staff_member([agency], groups, "reader", group=1)
    document = stored(viewer, carrier)
    client.force_login(viewer)
    page = client.get("/admin/documents/document/").content.decode()
    assert "delete_documents" not in page  # not offered
    act(client, [document], confirm="yes")
    document.refresh_from_db()
    assert document.live

    partial = staff_member([agency], groups, "client-docs-only", group=1)
    partial.user_permissions.add(
        Permission.objects.get(codename="delete_client_documents"),
        Permission.objects.get(codename="view_document"),
    )
    policy_document = stored(partial, PolicyFactory(client=carrier), "policy", name="dec.pdf")
    client.force_login(partial)
    response = act(client, [document, policy_document], confirm="yes")
    said = client.get(response["Location"]).content.decode()
    assert "Deleted 1 record(s)." in said
    assert "You need the delete permission on policy documents." in said
    document.refresh_from_db()
    policy_document.refresh_from_db()
    assert (document.live, policy_document.live) == (False, True)


def test_staff_see_only_the_modules_documents_they_may_view(client, groups, agency, carrier):
    """The API lists and serves a module's documents to holders of its view permission; the
    back-office's list, download and change-page inlines do the same."""
    uploader = staff_member([agency], groups, "uploader")
    client_document = stored(uploader, carrier, name="permit.pdf")
    policy = PolicyFactory(client=carrier, policy_number="DEC-9")
    policy_document = stored(uploader, policy, "policy", name="declarations.pdf")
    staff = UserFactory(username="client-files", agencies=[agency], is_staff=True)
    staff.user_permissions.add(
        *Permission.objects.filter(
            codename__in=["view_document", "view_client_documents", "view_client", "view_policy"]
        )
    )
    client.force_login(staff)
    listed = client.get("/admin/documents/document/").content.decode()
    assert "permit.pdf" in listed and "declarations.pdf" not in listed
    download = "/admin/documents/document/{}/download/"
    assert client.get(download.format(client_document.pk)).status_code == 200
    assert client.get(download.format(policy_document.pk)).status_code == 404
    page = client.get(f"/admin/clients/client/{carrier.pk}/change/").content.decode()
    assert "permit.pdf" in page and "declarations.pdf" not in page


def _raw_upload(browser, owner_id: int, *, file_name: bytes, description: bytes):
    boundary = "b0undary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="client"\r\n\r\n{owner_id}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="description"\r\n\r\n'
    ).encode() + description
    body += (
        f'\r\n--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="'.encode()
        + file_name
        + b'"\r\nContent-Type: application/pdf\r\n\r\n'
        + PDF
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return browser.generic("POST", URL, body, f"multipart/form-data; boundary={boundary}")


def test_the_form_is_read_as_the_apis_upload_routes_read_theirs(staff_client, carrier, settings):
    """Text that is not UTF-8 is refused, not stored with U+FFFD in its place; a file whose
    name is not UTF-8 is kept, under a name made readable (the API's parser, both)."""
    refused = _raw_upload(staff_client, carrier.pk, file_name=b"coi.pdf", description=b"caf\xe9")
    assert refused.status_code == 400
    assert "description: Not UTF-8" in refused.content.decode()
    assert not Document.objects.exists() and stored_files(settings) == []

    kept = _raw_upload(staff_client, carrier.pk, file_name=b"caf\xe9.pdf", description=b"ok")
    assert kept.status_code == 302, kept.content.decode()[:2000]
    assert Document.objects.get().file_name == "caf.pdf"
