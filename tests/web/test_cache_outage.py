"""Cache down: the quote request still stores the inquiry, the estimate still answers.

The real Django Redis cache backend points at a port on 127.0.0.1 where nothing
listens; rate limits fail open and the outage is logged (``configurator.clients``).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.test import Client

from configurator.inquiries.models import Inquiry
from tests.seed_form import seed_form
from tests.web.ports import free_port

pytestmark = pytest.mark.django_db

CONTACT = {"name": "Dana", "company": "Beispiel GmbH", "email": "d@example.com", "consent": "on"}


@pytest.fixture
def dead_cache(settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True
    settings.CACHES = {
        **settings.CACHES,  # the per-process fragment cache stays
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",
        },
    }


def test_quote_request_is_stored_and_the_outage_logged(
    client: Client, dead_cache: None, caplog: Any, eager_tasks: None
) -> None:
    with caplog.at_level(logging.WARNING, logger="configurator.clients"):
        response = client.post("/quote/", {**seed_form(), **CONTACT})
    assert response.status_code == 303
    inquiry = Inquiry.objects.get()
    assert (inquiry.email, inquiry.users) == ("d@example.com", 500)
    assert any("cache unavailable" in r.getMessage() for r in caplog.records)
    thanks = client.get("/quote/thanks/")
    assert thanks.status_code == 200 and str(inquiry.reference) in thanks.content.decode()


def test_estimate_and_api_answer_without_the_cache(client: Client, dead_cache: None) -> None:
    estimate = client.post("/estimate/", seed_form(), headers={"HX-Request": "true"})
    assert estimate.status_code == 200 and 'id="figure-gpus"' in estimate.content.decode()
    api = client.post(
        "/api/plans",
        {"model": "Qwen/Qwen3-32B-FP8", "context": 8192, "users": 500},
        content_type="application/json",
    )
    # The seed example (docs/sizing.md): 204 conversations on the GPUs.
    assert api.status_code == 200 and api.json()["summary"]["conversations_on_gpus"] == 204
