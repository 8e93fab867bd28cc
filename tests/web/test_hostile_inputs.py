"""Hostile inputs get a field error or a 4xx, never a 500 or a held worker.

Each case is one the hardening report found: a config.json claiming a million layers
(uploaded, or in a public Hub repo), deeply nested JSON, a 5,000-digit integer, model
ids the Hub library refuses (``--``, ``.git``), a body over the limit, and a 100 kB id
echoed into ``HX-Replace-Url``. The Hub cases use the recorded Hub on 127.0.0.1
(``tests/hubserver``); ``hubtest/million-layers`` is Qwen3-8B's config with
``num_hidden_layers`` 1,000,000 (``tests/hubserver/recorded/hubtest--million-layers.json``).
"""

from __future__ import annotations

import html as html_lib
import json
import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from configurator.inquiries.models import Inquiry
from configurator.modelhub.models import HubModel
from configurator.uploads import PUBLIC_MAX_BODY_BYTES
from sizing.model.spec import catalog_entry
from tests.hubserver.polling import post_until_answered
from tests.hubserver.server import RecordedHub
from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
EN = {"Accept-Language": "en"}
CONTACT = {"name": "Dana", "company": "Beispiel GmbH", "email": "d@example.com", "consent": "on"}


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<p id="id_{field}_error"[^>]*>([^<]*)</p>', html)
    assert match, f"no error slot for {field}"
    return html_lib.unescape(match.group(1))


def qwen3_8b() -> dict[str, Any]:
    entry = catalog_entry("Qwen/Qwen3-8B")
    assert entry is not None
    return dict(entry["config"])


def upload(raw: bytes) -> dict[str, Any]:
    return seed_form(model="", config_file=SimpleUploadedFile("config.json", raw))


@pytest.fixture(autouse=True)
def _offline(settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True


@pytest.mark.parametrize("layers", [1_000_000, 10**7])
def test_an_uploaded_config_with_a_million_layers_is_a_field_error(
    client: Client, layers: int
) -> None:
    raw = json.dumps({**qwen3_8b(), "num_hidden_layers": layers}).encode()
    response = client.post("/estimate/", upload(raw), headers=EN)
    assert response.status_code == 400
    # sizing/model/config_bounds.py: num_hidden_layers at most 1,024.
    message = field_error(response.content.decode(), "config_file")
    assert "num_hidden_layers" in message and "1,024" in message


def test_a_public_hub_repo_with_a_million_layers_is_a_field_error(
    client: Client, hub: RecordedHub, settings: Any
) -> None:
    settings.HF_HUB_OFFLINE = False
    response = post_until_answered(
        client, "/estimate/", seed_form(model="hubtest/million-layers"), headers=EN
    )
    assert response.status_code == 400
    message = field_error(response.content.decode(), "model")
    assert "num_hidden_layers" in message and "1,024" in message
    assert not HubModel.objects.exists()  # never cached


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),  # past the recursion limit
        (b'{"a":' * 70 + b"1" + b"}" * 70, "nested too deeply"),  # 70 > 64 levels
        (b'{"num_hidden_layers": ' + b"9" * 5000 + b"}", "number too long"),  # > 4,300 digits
        (b'{"vocab_size": NaN}', "gives vocab_size as NaN, not a number"),
    ],
)
def test_hostile_json_uploads_are_field_errors(client: Client, raw: bytes, words: str) -> None:
    response = client.post("/estimate/", upload(raw), headers=EN)
    assert response.status_code == 400
    assert words in field_error(response.content.decode(), "config_file")


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        (b'{"vocab_size": NaN}', "vocab_size as NaN"),
        # a string that holds the word first: the constant is the one outside a string
        (b'{"note": "not \\"NaN\\" here",\n  "rope_theta": -Infinity}', "rope_theta as -Infinity"),
        (b'{"text_config": {"hidden_size": Infinity}}', "text_config.hidden_size as Infinity"),
    ],
)
def test_a_non_finite_field_of_a_config_is_named(client: Client, raw: bytes, key: str) -> None:
    # Python's json (transformers' reader) takes NaN and Infinity; a field the sizing
    # would read as a number is refused naming it.
    response = client.post("/estimate/", upload(raw), headers=EN)
    assert response.status_code == 400
    assert f"gives {key}, not a number" in field_error(response.content.decode(), "config_file")


def test_a_config_with_infinity_in_a_list_is_sized(client: Client) -> None:
    # nvidia/Nemotron-H-56B-Base-8K's config.json holds "time_step_limit": [0.0, Infinity]
    # (its Hub config); transformers reads it with Python's json, and so does the upload.
    text = json.dumps(qwen3_8b())[:-1] + ', "time_step_limit": [0.0, Infinity]}'
    response = client.post("/estimate/", upload(text.encode()), headers=EN)
    assert response.status_code == 200
    assert field_error(response.content.decode(), "config_file") == ""


@pytest.mark.parametrize("bad", ["owner--x/model", "owner/model--x", "owner/model.git"])
def test_ids_the_hub_library_refuses_are_field_errors_everywhere(client: Client, bad: str) -> None:
    page = client.get("/", {"model": bad, "context_tokens": 8192, "users": 10}, headers=EN)
    assert page.status_code == 200
    assert "is not a Hugging Face model id" in field_error(page.content.decode(), "model")
    estimate = client.post("/estimate/", seed_form(model=bad), headers=EN)
    assert estimate.status_code == 400
    api = client.post(
        "/api/plans",
        {"model": bad, "context": 8192, "users": 10},
        content_type="application/json",
    )
    assert api.status_code == 400 and api.json()["field"] == "model"


def test_a_body_over_the_limit_is_refused(client: Client) -> None:
    raw = b" " * (PUBLIC_MAX_BODY_BYTES + 1)
    for path in ("/estimate/", "/quote/"):
        response = client.post(path, {**upload(raw), **CONTACT})
        assert response.status_code == 413
    assert not Inquiry.objects.exists()


def test_only_validated_values_are_echoed_into_the_share_url(client: Client) -> None:
    huge = "a" * 100_000
    response = client.post("/estimate/", seed_form(model=huge, users="x" * 1000), headers=HTMX)
    url = response["HX-Replace-Url"]
    assert len(url) < 300 and huge not in url and "xxx" not in url
    assert "context_tokens=8192" in url
