"""A private model on the configurator page: an uploaded config.json instead of a Hub id.

The uploaded file is the config of the seed example's model as bundled in
``sizing/data/models.json`` (Qwen/Qwen3-32B-FP8); given its checkpoint size (34.3 GB,
sizing article) the estimate must be the seed example's: 4 replicas × 1 GPU, 204
conversations on the GPUs, 24 × 48 GB = 1,152 GB of host memory (docs/sizing.md).
"""

from __future__ import annotations

import copy
import html as html_lib
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from django.core import mail
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from configurator.inquiries.models import Inquiry
from configurator.planning.services import plan_stored
from sizing.summary import plan_summary
from sizing.units import GIB
from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
EN = {"Accept-Language": "en"}
DE = {"Accept-Language": "de"}

CATALOG = json.loads(
    (Path(__file__).resolve().parents[2] / "sizing/data/models.json").read_text("utf-8")
)["models"]["Qwen/Qwen3-32B-FP8"]
SEED_CONFIG: dict[str, Any] = CATALOG["config"]
SEED_WEIGHTS_GIB = CATALOG["checkpoint_bytes"] / GIB  # 34.3 GB (sizing article) in GiB


@pytest.fixture(autouse=True)
def _isolated(settings: Any, eager_tasks: None) -> None:
    """An upload never needs the Hub; fresh rate limits; the mail task in-process."""
    settings.HF_HUB_OFFLINE = True
    settings.PRESALES_EMAIL = "presales@example.com"
    cache.clear()


def config_file(config: Any = None, *, name: str = "config.json", raw: bytes | None = None) -> Any:
    body = (
        raw if raw is not None else json.dumps(SEED_CONFIG if config is None else config).encode()
    )
    return SimpleUploadedFile(name, body, content_type="application/json")


def workload(**changes: Any) -> dict[str, Any]:
    """The seed workload (docs/sizing.md) with an uploaded config instead of a model id."""
    upload = {
        "model": "",
        "config_file": config_file(),
        "model_name": "acme/qwen3-32b-finetune",
        "weights_gib": repr(SEED_WEIGHTS_GIB),
    }
    return seed_form(**{**upload, **changes})


CONTACT = {
    "name": "Dana Schulz",
    "company": "Beispiel GmbH",
    "email": "dana@example.com",
    "phone": "",
    "message": "",
    "consent": "on",
}


def figure(html: str, key: str) -> str:
    match = re.search(rf'id="figure-{key}">(.*?)</div>', html, re.S)
    assert match, f"figure {key} not in the page"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", match.group(1)))


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<p id="id_{field}_error"[^>]*>([^<]*)</p>', html)
    assert match, f"no error slot for {field}"
    return html_lib.unescape(match.group(1))


def urlencoded(client: Client, path: str, data: dict[str, Any], **headers: str) -> Any:
    """``data`` posted to ``path`` as the page's form posts it: url-encoded."""
    body = urlencode(data, doseq=True)
    return client.post(path, body, "application/x-www-form-urlencoded", headers=headers)


def test_the_live_estimate_posts_url_encoded_and_the_file_has_its_own_form(
    client: Client,
) -> None:
    html = client.get("/", headers=EN).content.decode()
    form_tag = re.search(r'<form id="configurator"[^>]*>', html)
    assert form_tag and "enctype" not in form_tag.group(0)
    assert re.search(
        r'<form id="config-upload" method="post" action="/estimate/upload/" '
        r'enctype="multipart/form-data">',
        html,
    )
    file_input = re.search(r'<input type="file" name="config_file"[^>]*>', html)
    assert file_input
    # the file belongs to the upload form and is sent, multipart, in its own request
    assert 'form="config-upload"' in file_input.group(0)
    assert 'accept=".json' in file_input.group(0)
    assert 'hx-post="/estimate/upload/"' in file_input.group(0)
    assert 'hx-encoding="multipart/form-data"' in file_input.group(0)
    assert html.count('hx-encoding="multipart/form-data"') == 1
    assert "<summary>Private model? Upload its config.json</summary>" in html
    # without JavaScript the upload form has its own button
    assert re.search(r'<button type="submit"[^>]*form="config-upload"[^>]*>Upload and', html)


def test_an_upload_without_javascript_sizes_the_file_with_the_default_workload(
    client: Client,
) -> None:
    # The upload form sends the file alone; the other inputs take their defaults
    # (8,192 tokens, 100 users: the form's initial values).
    response = client.post("/estimate/upload/", {"config_file": config_file()}, headers=EN)
    html = response.content.decode()
    assert response.status_code == 200
    # no name given: modelhub names it after the config's first architecture
    assert "Private model Qwen3ForCausalLM: sized from the uploaded config.json" in html
    assert re.search(r'name="users" value="100"', html)
    kept = re.search(r'<input type="hidden" name="config_text" value="([^"]*)"', html)
    assert kept and json.loads(html_lib.unescape(kept.group(1))) == SEED_CONFIG


def test_the_live_estimate_sizes_a_kept_config_url_encoded(client: Client) -> None:
    # The upload's answer keeps the file's text in the form; every later keystroke
    # posts it url-encoded, without the file.
    data = {**workload(config_file=""), "config_text": json.dumps(SEED_CONFIG)}
    del data["config_file"]
    response = urlencoded(client, "/estimate/", data, **HTMX, **EN)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    # Seed example (DESIGN §3).
    assert "24 × 48 GB = 1,152 GB" in figure(html, "host")
    assert "Private model acme/qwen3-32b-finetune: sized from the uploaded config.json" in html


def test_the_upload_is_named_once_by_its_summary_and_once_by_its_label(client: Client) -> None:
    html = html_lib.unescape(client.get("/", headers=EN).content.decode())
    assert html.count("Private model? Upload its config.json") == 1  # the <summary>
    assert re.search(r'<label for="id_config_file">The model\'s config.json:</label>', html)


def test_uploaded_seed_config_gives_the_seed_estimate(client: Client) -> None:
    response = client.post("/estimate/upload/", workload(), headers=EN)
    html = response.content.decode()
    assert response.status_code == 200
    # Seed example (docs/sizing.md).
    assert "4 replicas × 1 GPU" in figure(html, "gpus")
    assert "204" in figure(html, "resident")
    assert "24 × 48 GB = 1,152 GB" in figure(html, "host")
    assert "Private model acme/qwen3-32b-finetune: sized from the uploaded config.json" in html
    assert 'id="share-url"' not in html  # a link cannot carry the file


def test_live_upload_returns_the_partial_in_german(client: Client) -> None:
    response = client.post("/estimate/upload/", workload(), headers={**HTMX, **DE})
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    # Seed example, German number format (docs/customer.md: 1.152 GB).
    assert "24 × 48 GB = 1.152 GB" in figure(html, "host")
    assert "Privates Modell acme/qwen3-32b-finetune: berechnet aus der hochgeladenen" in html


def test_without_weights_they_come_from_the_parameter_count(client: Client) -> None:
    response = client.post("/estimate/upload/", workload(weights_gib=""), headers=EN)
    html = response.content.decode()
    assert response.status_code == 200 and 'id="figure-gpus"' in html


def broken(**changes: Any) -> dict[str, Any]:
    config = copy.deepcopy(SEED_CONFIG)
    for key, value in changes.items():
        if value is None:
            config.pop(key)
        else:
            config[key] = value
    return config


@pytest.mark.parametrize(
    ("changes", "field", "text"),
    [
        # Not JSON: modelhub.upload.model_from_config_upload names the position.
        (
            {"config_file": config_file(raw=b'{"num_hidden_layers": 64,')},
            "config_file",
            "is not valid JSON",
        ),
        # A JSON list, not an object.
        ({"config_file": config_file([1, 2])}, "config_file", "must hold a JSON object"),
        # An incomplete config: the engine names the missing field.
        (
            {"config_file": config_file(broken(num_attention_heads=None))},
            "config_file",
            "has no num_attention_heads",
        ),
        # More than 1 MB (MAX_CONFIG_BYTES) is not a config.json.
        (
            {"config_file": config_file(raw=b" " * 1_000_001)},
            "config_file",
            "larger than 1 MB",
        ),
        ({"config_file": config_file(name="model.safetensors")}, "config_file", "Only a JSON"),
        ({"config_file": config_file(raw=b"\xff\xfe{}")}, "config_file", "not UTF-8"),
        ({"model": "Qwen/Qwen3-32B-FP8"}, "config_file", "either a Hugging Face model id"),
        ({"weights_gib": "0"}, "weights_gib", "The weights must be above 0 and at most"),
        ({"model_name": "x" * 201}, "model_name", "at most 200 characters"),
        # A context beyond the config's max_position_embeddings (40,960): same rule as Hub.
        ({"context_tokens": 50_000}, "context_tokens", "40"),
    ],
)
def test_bad_uploads_are_shown_at_their_field(
    client: Client, changes: dict[str, Any], field: str, text: str
) -> None:
    response = client.post("/estimate/upload/", workload(**changes), headers=EN)
    html = response.content.decode()
    assert response.status_code == 400
    assert text in field_error(html, field)
    assert 'id="figure-gpus"' not in html


def test_weights_for_a_hub_model_are_refused(client: Client) -> None:
    data = workload(model="Qwen/Qwen3-32B-FP8", config_file="", weights_gib="30")
    response = client.post("/estimate/", data, headers=EN)
    assert response.status_code == 400
    assert "come from the Hub" in field_error(response.content.decode(), "weights_gib")


def test_quote_request_without_javascript_keeps_the_uploaded_config(
    client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    # Step 1: the upload form's button sends the file; the page keeps its text.
    page = client.post("/estimate/upload/", workload(), headers=EN).content.decode()
    kept = re.search(r'<input type="hidden" name="config_text" value="([^"]*)"', page)
    assert kept and json.loads(html_lib.unescape(kept.group(1))) == SEED_CONFIG
    # Step 2: the browser cannot refill a file input; the quote request sends the kept text.
    data = {**workload(), "config_text": html_lib.unescape(kept.group(1))}
    del data["config_file"]  # not a control of the configurator's form
    with django_capture_on_commit_callbacks(execute=True):
        response = urlencoded(client, "/quote/", {**data, **CONTACT}, **EN)
    assert response.status_code == 303
    inquiry = Inquiry.objects.get()
    assert inquiry.model == "acme/qwen3-32b-finetune"
    assert inquiry.private_config == SEED_CONFIG
    assert inquiry.private_weights_gib == pytest.approx(SEED_WEIGHTS_GIB)
    presales = next(m for m in mail.outbox if list(m.to) == ["presales@example.com"])
    assert "acme/qwen3-32b-finetune" in presales.body
    # Presales re-plans from the inquiry: the same plan as the customer saw.
    again = plan_stored(inquiry.inputs)
    assert again.request.model.repo_id == "acme/qwen3-32b-finetune"

    def figures(summary: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in summary.items() if k != "verdict_notes"}

    assert figures(plan_summary(again)) == figures(inquiry.plan_summary)


def test_quote_request_with_the_file_itself(client: Client) -> None:
    response = client.post(
        "/quote/", {**workload(model_name="", weights_gib=""), **CONTACT}, headers=DE
    )
    assert response.status_code == 303
    inquiry = Inquiry.objects.get()
    assert inquiry.private_config == SEED_CONFIG and inquiry.private_weights_gib is None
    # No name given: modelhub names it after the config's first architecture.
    assert inquiry.model == "private Qwen3ForCausalLM"
    assert plan_summary(plan_stored(inquiry.inputs))["model"] == inquiry.plan_summary["model"]


def test_hub_model_inquiry_stores_no_config(client: Client) -> None:
    data = workload(model="Qwen/Qwen3-32B-FP8", config_file="", model_name="", weights_gib="")
    response = client.post("/quote/", {**data, **CONTACT}, headers=EN)
    assert response.status_code == 303
    inquiry = Inquiry.objects.get()
    assert inquiry.private_config is None and "private_config" not in inquiry.inputs
    assert inquiry.model == "Qwen/Qwen3-32B-FP8"


def test_presales_quote_an_inquiry_for_an_uploaded_model(client: Client) -> None:
    # The inquiry's inputs are JSON-safe (the stored config.json rather than a spec), so a
    # quote stores them and re-plans the private model for every alternative.
    from configurator.quotes.services import quote_create_from_inquiry

    response = client.post("/quote/", {**workload(), **CONTACT}, headers=EN)
    assert response.status_code == 303
    inquiry = Inquiry.objects.get()
    quote = quote_create_from_inquiry(inquiry=inquiry, user=None)
    alternatives = list(quote.alternatives.all())
    assert alternatives
    assert all(alt.inputs["private_config"] == SEED_CONFIG for alt in alternatives)
    assert all(alt.plan_summary["model"] == "acme/qwen3-32b-finetune" for alt in alternatives)


def test_a_kept_config_over_the_limit_is_its_only_error(client: Client) -> None:
    # configurator/uploads.py MAX_CONFIG_BYTES (1 MB) bounds the kept text as it bounds
    # the upload; the empty model field is not a second error, since a config was sent.
    data = {**workload(config_file=""), "config_text": "{" + " " * 1_000_000 + "}"}
    response = client.post("/estimate/", data, headers=EN)
    page = response.content.decode()
    assert response.status_code == 400
    assert "Enter a Hugging Face model id" not in page
    assert field_error(page, "config_file") == (
        "The file is larger than 1 MB: upload the model's config.json, not its weights."
    )


def test_quote_request_with_infinity_in_the_config_is_stored(client: Client) -> None:
    # "time_step_limit": [0.0, Infinity] as nvidia/Nemotron-H-56B-Base-8K's config.json has
    # it: read as Python's json reads it, stored with the constant named ("Infinity"), which
    # a PostgreSQL jsonb column takes; the plan is the one of the config without it.
    raw = (json.dumps(SEED_CONFIG)[:-1] + ', "time_step_limit": [0.0, Infinity]}').encode()
    data = {**workload(config_file=config_file(raw=raw), weights_gib=""), **CONTACT}
    response = client.post("/quote/", data, headers=EN)
    assert response.status_code == 303
    inquiry = Inquiry.objects.get()
    assert inquiry.private_config == {**SEED_CONFIG, "time_step_limit": [0.0, "Infinity"]}
    plain = plan_summary(plan_stored({**inquiry.inputs, "private_config": SEED_CONFIG}))
    stored = plan_summary(plan_stored(inquiry.inputs))
    assert stored["weights_gib"] == plain["weights_gib"]
    assert stored["cpu_tier_total_gib"] == plain["cpu_tier_total_gib"]
