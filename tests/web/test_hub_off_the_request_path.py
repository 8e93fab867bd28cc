"""A slow Hub holds no worker: uncached models are looked up in the background.

Real ``huggingface_hub`` against the recorded Hub on 127.0.0.1 (``tests/hubserver``);
``stalled_hub`` accepts connections and never answers. The page answers at once with
"looking up" and polls; failed lookups are remembered, so repeats never reach the Hub.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.test import Client

from configurator.modelhub import background
from configurator.modelhub.hub import HubClient
from configurator.modelhub.models import HubModel
from tests.hubserver.polling import PENDING_MARK, post_until_answered
from tests.hubserver.server import RecordedHub
from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db(transaction=True)

HTMX = {"HX-Request": "true"}
EN = {"Accept-Language": "en"}


def lookup_key(settings: Any, repo_id: str) -> str:
    client = HubClient(
        endpoint=settings.HF_ENDPOINT,
        token=settings.HF_TOKEN,
        timeout_s=float(settings.HF_TIMEOUT_SECONDS),
    )
    return background.lookup_key(client, repo_id, None)


def test_a_stalled_hub_holds_no_request_and_others_are_served(
    client: Client, stalled_hub: RecordedHub, settings: Any
) -> None:
    settings.HF_TIMEOUT_SECONDS = 30.0  # far longer than this test runs
    unknown = client.post(
        "/estimate/", seed_form(model="someone/slow-model"), headers={**HTMX, **EN}
    )
    html = unknown.content.decode()
    assert unknown.status_code == 200 and PENDING_MARK in html
    assert "Looking up someone/slow-model on the Hugging Face Hub" in html
    assert 'hx-trigger="load delay:1s"' in html  # the page polls
    # The answer came back while the lookup still waits for the stalled Hub.
    assert background.running(lookup_key(settings, "someone/slow-model"))
    # Meanwhile a catalog model is estimated as usual.
    seed = client.post("/estimate/", seed_form(), headers={**HTMX, **EN})
    assert seed.status_code == 200 and 'id="figure-gpus"' in seed.content.decode()
    # Asking again starts no second lookup.
    again = client.post("/estimate/", seed_form(model="someone/slow-model"), headers=HTMX)
    assert PENDING_MARK in again.content.decode()
    # The one background lookup reaches the stalled Hub in its own thread: wait until the
    # Hub has seen it (at most 5 s), then it must be the only request.
    deadline = time.monotonic() + 5.0
    while not stalled_hub.paths() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stalled_hub.paths() == ["/api/models/someone/slow-model"]


def test_a_failed_lookup_is_remembered_and_repeats_never_reach_the_hub(
    client: Client, hub: RecordedHub
) -> None:
    for _ in range(3):
        response = post_until_answered(
            client, "/estimate/", seed_form(model="nobody/no-such-model"), headers=EN
        )
        assert response.status_code == 400
        assert "was not found on the Hugging Face Hub" in response.content.decode()
    # The recorded Hub answers an unknown repo with 401 RepoNotFound, once.
    assert hub.paths() == ["/api/models/nobody/no-such-model"]


def test_a_timed_out_lookup_is_remembered_briefly(
    client: Client, stalled_hub: RecordedHub, settings: Any
) -> None:
    # fixtures.py: a 1 s deadline; settings.HF_OUTAGE_CACHE_SECONDS keeps the outage.
    first = post_until_answered(client, "/estimate/", seed_form(model="x/unknown"), headers=EN)
    assert "did not answer within 1 s" in first.content.decode()
    second = client.post("/estimate/", seed_form(model="x/unknown"), headers=EN)
    assert "did not answer within 1 s" in second.content.decode()
    assert stalled_hub.paths() == ["/api/models/x/unknown"]


def test_a_looked_up_model_is_cached_and_then_answers_at_once(
    client: Client, hub: RecordedHub
) -> None:
    post_until_answered(client, "/estimate/", seed_form(model="Qwen/Qwen3-8B-FP8"), headers=EN)
    assert HubModel.objects.filter(repo_key="qwen/qwen3-8b-fp8").exists()
    cached = client.post("/estimate/", seed_form(model="Qwen/Qwen3-8B-FP8"), headers=HTMX)
    assert 'id="figure-gpus"' in cached.content.decode()


def test_the_api_answers_503_with_retry_after_while_looking_up(
    client: Client, stalled_hub: RecordedHub, settings: Any
) -> None:
    settings.HF_TIMEOUT_SECONDS = 30.0
    body = {"model": "someone/api-model", "context": 8192, "users": 10}
    response = client.post("/api/plans", body, content_type="application/json")
    assert response.status_code == 503 and response["Retry-After"] == "2"
    assert response.json()["field"] == "model"
    assert "being looked up" in response.json()["detail"]


@pytest.mark.parametrize("path", ["/api/plans", "/api/recommendations", "/api/bundle"])
def test_the_api_refuses_the_clients_own_input_before_asking_the_hub(
    client: Client, stalled_hub: RecordedHub, settings: Any, path: str
) -> None:
    # A shared prompt as long as the context is refused whatever the model (sizing/workload.py):
    # the client learns it at once, and no lookup starts for a request that cannot be sized.
    settings.HF_TIMEOUT_SECONDS = 30.0
    body = {"model": "someone/api-model", "context": 8192, "users": 10}
    body["shared_prompt_tokens"] = 8192
    if path == "/api/bundle":
        response = client.get(path, body)
    else:
        response = client.post(path, body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["field"] == "shared_prompt_tokens"
    assert "shorter than the context of 8,192 tokens" in response.json()["detail"]
    assert not background.running(lookup_key(settings, "someone/api-model"))
    assert stalled_hub.paths() == []
