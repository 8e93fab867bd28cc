"""Requesting a quote: the inquiry is stored with the plan, presales and customer get mail.

The workload is the seed document's worked example (DESIGN §3): its plan has 204
conversations on the GPUs and 24 × 48 GB of host memory.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core import mail
from django.core.cache import cache
from django.test import Client

from configurator.inquiries.models import Inquiry
from configurator.inquiries.services import RATE_LIMIT_COUNT

pytestmark = pytest.mark.django_db

EN = {"Accept-Language": "en"}


def request_data(**changes: Any) -> dict[str, Any]:
    """The seed workload (DESIGN §3) plus a complete contact."""
    data: dict[str, Any] = {
        "model": "Qwen/Qwen3-32B-FP8",
        "context_tokens": 8192,
        "users": 500,
        "active_share_percent": 60,
        "system_prompt_tokens": 1000,
        "kv_dtype": "fp8",
        "gpu": "rtx-pro-6000-se",
        "gpus_per_node": 4,
        "serving_engine": "vllm",
        "new_conversations_per_day": 2000,
        "name": "Ada Muster",
        "company": "Muster & Söhne GmbH",
        "email": "ada@example.com",
        "phone": "",
        "message": "Two sites, one node each.",
        "consent": "on",
        "website": "",
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


@pytest.fixture(autouse=True)
def _isolated(settings: Any) -> None:
    """No Hub lookups, a known presales address, and a fresh rate-limit cache."""
    settings.HF_HUB_OFFLINE = True
    settings.PRESALES_EMAIL = "presales@example.com"
    cache.clear()


def test_request_stores_inquiry_with_plan_and_confirms_with_reference(
    client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/quote/", request_data(), headers=EN)
    assert response.status_code == 303 and response["Location"] == "/quote/thanks/"
    inquiry = Inquiry.objects.get()
    assert re.fullmatch(rf"INQ-{inquiry.received_at.year}-\d{{6}}", inquiry.reference or "")
    assert inquiry.status == Inquiry.Status.NEW
    assert (inquiry.model_id, inquiry.context_tokens, inquiry.users) == (
        "Qwen/Qwen3-32B-FP8",
        8192,
        500,
    )
    assert (inquiry.active_share_percent, inquiry.system_prompt_tokens) == (60, 1000)
    assert inquiry.serving_engine == "vllm" and inquiry.language == "en" and inquiry.consent
    # Seed example with a shared 1,000-token prompt (docs/sizing.md §4): 1,000 × 128 KiB =
    # 0.12 GiB once per replica, 0.88 GiB per conversation: ⌊(51.09 − 0.12) / 0.88⌋ = 58
    # per card, 232 on the GPUs; tier 500 × 0.88 + 4 × 0.12 = 439.5 GiB → 110 GiB flag.
    assert inquiry.plan_summary["conversations_on_gpus"] == 232
    assert (inquiry.plan_summary["dimm_count"], inquiry.plan_summary["dimm_gb"]) == (24, 48)
    assert inquiry.plan_summary["vllm_kv_offloading_size_gib"] == 110
    assert inquiry.inputs["gpu_slug"] == "rtx-pro-6000-se"

    reference = str(inquiry.reference)
    thanks = client.get("/quote/thanks/", headers=EN)
    assert thanks.status_code == 200 and reference in thanks.content.decode()

    assert sorted(m.to[0] for m in mail.outbox) == ["ada@example.com", "presales@example.com"]
    presales = next(m for m in mail.outbox if list(m.to) == ["presales@example.com"])
    customer = next(m for m in mail.outbox if list(m.to) == ["ada@example.com"])
    assert reference in presales.subject and "Muster & Söhne GmbH" in presales.body
    assert "24 × 48 GB = 1.152 GB" in presales.body  # presales reads German (LANGUAGE_CODE)
    assert customer.subject == f"Your quote request {inquiry.reference}"
    assert "24 × 48 GB = 1,152 GB" in customer.body  # the customer's language: English


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"consent": None}, "consent"),
        ({"email": "not-an-email"}, "email"),
        ({"name": ""}, "name"),
        ({"company": ""}, "company"),
        ({"users": 0}, "users"),
        ({"context_tokens": 10_000_001}, "context_tokens"),
        ({"model": "not a model id"}, "model"),
    ],
)
def test_invalid_request_stores_nothing_and_shows_the_field(
    client: Client, changes: dict[str, Any], field: str
) -> None:
    response = client.post("/quote/", request_data(**changes), headers=EN)
    assert response.status_code == 400
    assert re.search(rf'<p id="id_{field}_error"[^>]*>[^<]+</p>', response.content.decode())
    assert not Inquiry.objects.exists()
    assert mail.outbox == []


def test_honeypot_filled_stores_nothing(client: Client) -> None:
    response = client.post("/quote/", request_data(website="http://spam.example"), headers=EN)
    assert response.status_code == 400
    assert not Inquiry.objects.exists()
    assert mail.outbox == []


def test_rate_limit_per_client_address(client: Client) -> None:
    for _ in range(RATE_LIMIT_COUNT):
        assert client.post("/quote/", request_data(), REMOTE_ADDR="192.0.2.1").status_code == 303
    blocked = client.post("/quote/", request_data(), REMOTE_ADDR="192.0.2.1", headers=EN)
    assert blocked.status_code == 429
    assert "Too many requests" in blocked.content.decode()
    assert Inquiry.objects.count() == RATE_LIMIT_COUNT
    other = client.post("/quote/", request_data(), REMOTE_ADDR="192.0.2.2")
    assert other.status_code == 303
    assert Inquiry.objects.count() == RATE_LIMIT_COUNT + 1


def test_csrf_is_enforced() -> None:
    client = Client(enforce_csrf_checks=True)
    assert client.post("/quote/", request_data()).status_code == 403
    assert not Inquiry.objects.exists()


def test_references_are_distinct(client: Client) -> None:
    client.post("/quote/", request_data())
    client.post("/quote/", request_data(email="bob@example.com"))
    references = list(Inquiry.objects.values_list("reference", flat=True))
    assert len(set(references)) == 2


def test_german_customer_gets_german_mail(
    client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/quote/", request_data(), headers={"Accept-Language": "de"})
    inquiry = Inquiry.objects.get()
    customer = next(m for m in mail.outbox if list(m.to) == ["ada@example.com"])
    assert inquiry.language == "de"
    assert customer.subject == f"Ihre Angebotsanfrage {inquiry.reference}"


def test_thanks_without_a_request_goes_back_to_the_configurator(client: Client) -> None:
    response = client.get("/quote/thanks/")
    assert response.status_code == 302 and response["Location"] == "/"


def test_form_links_the_privacy_notice(client: Client) -> None:
    page = client.get("/", headers=EN).content.decode()
    assert 'href="/privacy/"' in page and 'name="consent"' in page
    privacy = client.get("/privacy/", headers=EN)
    assert privacy.status_code == 200 and "Privacy notice" in privacy.content.decode()
