"""The configurator page says when the Hub did not answer and an older copy sized the model.

The real ``huggingface_hub`` client talks to the recorded Hub on 127.0.0.1
(``tests/hubserver``): ``hub`` answers at once, ``stalled_hub`` accepts connections and
never answers, with a 1 s deadline (``tests/hubserver/fixtures.py``). Expected commits come
from the recorded responses in ``tests/hubserver/recorded/``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import formats, translation
from pytest_django import Settings

from configurator.inquiries.notices import fallback_notice
from configurator.modelhub.models import HubModel
from configurator.modelhub.services import model_lookup
from tests.hubserver.polling import post_until_answered
from tests.hubserver.server import RECORDED, RecordedHub, serve

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
EN = {"Accept-Language": "en"}
DE = {"Accept-Language": "de"}

# tests/hubserver/recorded/Qwen--Qwen3-8B-FP8.json: the commit of its main branch.
FP8_SHA = json.loads((RECORDED / "Qwen--Qwen3-8B-FP8.json").read_text("utf-8"))["revisions"]["main"]


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> None:
    cache.clear()


def workload(model: str) -> dict[str, Any]:
    """A small workload (the seed example's shape, 8,192 tokens, 50 users)."""
    return {
        "model": model,
        "context_tokens": 8192,
        "users": 50,
        "shared_prompt_tokens": 0,
        "kv_dtype": "fp8",
        "gpu": "rtx-pro-6000-se",
        "gpus_per_node": 4,
        "new_conversations_per_day": 0,
    }


def notice(html: str) -> str:
    match = re.search(r'<p class="notice hub-notice" role="status">([^<]*)</p>', html)
    assert match, "no Hub notice in the estimate"
    return match.group(1)


def cache_branch_main(settings: Settings) -> None:
    """Cache Qwen/Qwen3-8B-FP8 at revision ``main`` from an answering recorded Hub.

    The page asks for the default branch (revision ``""``), which is then not cached:
    it must go to the Hub, and a stalled Hub leaves this copy as the fallback.
    """
    endpoint = settings.HF_ENDPOINT
    with serve() as answering:
        settings.HF_ENDPOINT = answering.url
        model_lookup("Qwen/Qwen3-8B-FP8", revision="main")
    settings.HF_ENDPOINT = endpoint


def test_stalled_hub_estimate_names_the_cached_copy_in_english(
    client: Client, stalled_hub: RecordedHub, settings: Settings
) -> None:
    cache_branch_main(settings)
    stored = HubModel.objects.get()
    response = post_until_answered(
        client, "/estimate/", workload("Qwen/Qwen3-8B-FP8"), headers={**HTMX, **EN}
    )
    html = response.content.decode()
    assert response.status_code == 200 and 'id="figure-gpus"' in html
    text = notice(html)
    # fixtures.py: STALL_TIMEOUT_SECONDS = 1.0; the sha is the recorded main commit.
    assert text.startswith("The Hugging Face Hub did not answer within 1 s;")
    assert f"copy of Qwen/Qwen3-8B-FP8 (commit {FP8_SHA[:12]})" in text
    with translation.override("en"):
        assert f"stored on {formats.date_format(stored.fetched_at, 'SHORT_DATE_FORMAT')}" in text
    assert stalled_hub.paths() == ["/api/models/Qwen/Qwen3-8B-FP8"]


def test_stalled_hub_notice_in_german_on_the_whole_page(
    client: Client, stalled_hub: RecordedHub, settings: Settings
) -> None:
    cache_branch_main(settings)
    response = post_until_answered(client, "/estimate/", workload("Qwen/Qwen3-8B-FP8"), headers=DE)
    text = notice(response.content.decode())
    assert response.status_code == 200
    # locale/de: the German wording of the timeout and of the cached copy.
    assert text.startswith("Der Hugging Face Hub hat nicht innerhalb von 1 s geantwortet;")
    assert f"gespeicherte Kopie von Qwen/Qwen3-8B-FP8 (Commit {FP8_SHA[:12]})" in text


def test_catalog_fallback_is_worded_in_both_languages(stalled_hub: RecordedHub) -> None:
    # An explicit revision skips the catalog (docs/models.md); the stalled Hub then
    # leaves the catalog entry as the answer.
    resolved = model_lookup("Qwen/Qwen3-32B-FP8", revision="main")
    assert resolved.origin == "catalog"
    with translation.override("en"):
        assert fallback_notice(resolved) == (
            "The Hugging Face Hub did not answer within 1 s; this estimate uses the "
            "offline catalog's entry for Qwen/Qwen3-32B-FP8."
        )
    with translation.override("de"):
        assert fallback_notice(resolved) == (
            "Der Hugging Face Hub hat nicht innerhalb von 1 s geantwortet; diese Schätzung "
            "verwendet den Eintrag des Offline-Katalogs für Qwen/Qwen3-32B-FP8."
        )


def test_an_answering_hub_gives_no_notice(client: Client, hub: RecordedHub) -> None:
    response = post_until_answered(
        client, "/estimate/", workload("Qwen/Qwen3-8B-FP8"), headers={**HTMX, **EN}
    )
    html = response.content.decode()
    assert 'id="figure-gpus"' in html and "hub-notice" not in html
    assert HubModel.objects.get().sha == FP8_SHA


def test_stalled_hub_without_any_copy_is_an_error_at_the_model_field(
    client: Client, stalled_hub: RecordedHub
) -> None:
    response = post_until_answered(client, "/estimate/", workload("Qwen/Qwen3-8B-FP8"), headers=EN)
    html = response.content.decode()
    assert response.status_code == 400
    slot = re.search(r'<p id="id_model_error"[^>]*>([^<]*)</p>', html)
    # configurator/modelhub/hub.py words the timeout; services.py the missing sources.
    assert slot and "did not answer within 1 s" in slot.group(1)
    assert "upload its config.json" in slot.group(1)
    assert not HubModel.objects.exists()


def test_gated_model_stays_an_error_at_the_model_field(client: Client, hub: RecordedHub) -> None:
    response = post_until_answered(
        client, "/estimate/", workload("meta-llama/Llama-3.1-8B"), headers={**HTMX, **EN}
    )
    slot = re.search(
        r'<p id="id_model_error"[^>]*hx-swap-oob="true">([^<]*)</p>', response.content.decode()
    )
    # Recorded meta-llama--Llama-3.1-8B.json is gated (manual); modelhub says how to get access.
    assert slot and "gated" in slot.group(1) and "HF_TOKEN" in slot.group(1)
    assert "hub-notice" not in response.content.decode()
