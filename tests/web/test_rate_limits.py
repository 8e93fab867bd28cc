"""Per-client rate limits on the live estimate and the API (``configurator.clients``)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db

API_BODY = {"model": "Qwen/Qwen3-32B-FP8", "context": 8192, "users": 500}


@pytest.fixture(autouse=True)
def _low_limits(settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True
    settings.RATE_LIMITS = {"estimate": "3/m", "api": "2/m"}
    cache.clear()


def test_the_estimate_is_limited_per_client(client: Client) -> None:
    for _ in range(3):
        assert client.post("/estimate/", seed_form(), REMOTE_ADDR="192.0.2.10").status_code == 200
    limited = client.post(
        "/estimate/", seed_form(), REMOTE_ADDR="192.0.2.10", headers={"Accept-Language": "de"}
    )
    assert limited.status_code == 429 and limited["Retry-After"] == "60"
    # configurator/locale/de: the German sentence.
    assert "Zu viele Anfragen von Ihrer Adresse" in limited.content.decode()
    assert client.post("/estimate/", seed_form(), REMOTE_ADDR="192.0.2.11").status_code == 200


def test_the_api_is_limited_per_client(client: Client) -> None:
    def post(address: str) -> Any:
        return client.post(
            "/api/plans", API_BODY, content_type="application/json", REMOTE_ADDR=address
        )

    assert [post("192.0.2.20").status_code for _ in range(3)] == [200, 200, 429]
    limited = post("192.0.2.20")
    assert limited["Retry-After"] == "60" and "too many requests" in limited.json()["detail"]
    assert post("192.0.2.21").status_code == 200
    bundle = client.get("/api/bundle", {**API_BODY}, REMOTE_ADDR="192.0.2.20")
    assert bundle.status_code == 429


def test_behind_a_trusted_proxy_each_customer_has_their_own_limit(
    client: Client, settings: Any
) -> None:
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    proxy = {"REMOTE_ADDR": "127.0.0.1"}
    for _ in range(3):
        headers = {"X-Forwarded-For": "203.0.113.1"}
        assert client.post("/estimate/", seed_form(), **proxy, headers=headers).status_code == 200
    one = {"X-Forwarded-For": "203.0.113.1"}
    other = {"X-Forwarded-For": "203.0.113.2"}
    assert client.post("/estimate/", seed_form(), **proxy, headers=one).status_code == 429
    assert client.post("/estimate/", seed_form(), **proxy, headers=other).status_code == 200
