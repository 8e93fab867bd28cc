"""A config.json over the upload limit is refused at its field, in both languages, with
the live estimate (htmx) and without JavaScript, keeping the other inputs.

The limit is the 1 MB of ``configurator.uploads.MAX_CONFIG_BYTES`` that docs/customer.md
promises; 1.5 MB is the file the first-use review uploaded.
"""

from __future__ import annotations

import html as html_lib
import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from configurator.inquiries.models import Inquiry
from configurator.uploads import PUBLIC_MAX_READ_BYTES
from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
MESSAGES = {
    "en": "The file is larger than 1 MB",
    "de": "Die Datei ist größer als 1 MB",
}
CONTACT = {"name": "Dana", "company": "Beispiel GmbH", "email": "d@example.com", "consent": "on"}


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<p id="id_{field}_error"[^>]*>([^<]*)</p>', html)
    assert match, f"no error slot for {field}"
    return html_lib.unescape(match.group(1))


def big_config(size: int = 1_500_000) -> dict[str, Any]:
    """A private model's form with a ``.json`` file of ``size`` bytes."""
    raw = b'{"pad": "' + b"x" * (size - 11) + b'"}'
    return seed_form(model="", users=321, config_file=SimpleUploadedFile("config.json", raw))


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_live_estimate_shows_the_limit_at_the_upload_field(
    client: Client, language: str
) -> None:
    response = client.post(
        "/estimate/", big_config(), headers={**HTMX, "Accept-Language": language}
    )
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/html")
    assert MESSAGES[language] in field_error(response.content.decode(), "config_file")


@pytest.mark.parametrize("language", ["en", "de"])
def test_without_javascript_the_page_comes_back_with_the_field_error_and_the_inputs(
    client: Client, language: str
) -> None:
    response = client.post("/estimate/", big_config(), headers={"Accept-Language": language})
    assert response.status_code == 413
    page = response.content.decode()
    assert MESSAGES[language] in field_error(page, "config_file")
    assert 'name="users" value="321"' in page  # the typed inputs are kept


def test_a_quote_request_with_the_big_file_stores_nothing_and_keeps_the_contact(
    client: Client,
) -> None:
    response = client.post(
        "/quote/", {**big_config(), **CONTACT}, headers={"Accept-Language": "en"}
    )
    assert response.status_code == 413
    page = response.content.decode()
    assert MESSAGES["en"] in field_error(page, "config_file")
    assert 'value="d@example.com"' in page
    assert not Inquiry.objects.exists()


def test_the_recommendations_and_traffic_fragments_refuse_it_too(client: Client) -> None:
    response = client.post("/recommendations/", big_config(), headers={"Accept-Language": "en"})
    assert response.status_code == 413
    assert MESSAGES["en"] in field_error(response.content.decode(), "config_file")
    traffic = client.post("/estimate/traffic/", big_config(), headers=HTMX)
    assert traffic.status_code == 413


def test_a_body_too_large_to_read_still_gets_the_field_error(client: Client) -> None:
    response = client.post(
        "/estimate/",
        big_config(PUBLIC_MAX_READ_BYTES + 1),
        headers={**HTMX, "Accept-Language": "en"},
    )
    assert response.status_code == 413
    assert MESSAGES["en"] in field_error(response.content.decode(), "config_file")


def test_a_file_just_over_1_mb_in_a_body_under_the_body_limit_is_refused_the_same(
    client: Client,
) -> None:
    response = client.post("/estimate/", big_config(1_000_001), headers={"Accept-Language": "en"})
    assert response.status_code == 400  # read whole: an ordinary field error
    assert MESSAGES["en"] in field_error(response.content.decode(), "config_file")


def test_with_csrf_checks_the_form_post_read_first_by_the_middleware_gets_the_same() -> None:
    # Django's CSRF check reads a form post's body for its token before the view runs.
    client = Client(enforce_csrf_checks=True)
    token = client.get("/").cookies["csrftoken"].value
    for path in ("/estimate/", "/quote/"):
        form = {**big_config(), **CONTACT, "csrfmiddlewaretoken": token}
        response = client.post(path, form, headers={"Accept-Language": "en"})
        assert response.status_code == 413
        assert MESSAGES["en"] in field_error(response.content.decode(), "config_file")
    assert not Inquiry.objects.exists()
