"""An anonymous body costs little whatever it holds: the rate limit comes before the
body is read, the body is capped by its length and its number of fields, and an answer
names one unknown field (configurator/deployments/api_body.py, api_urls.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from configurator.deployments.api_body import MAX_BODY_BYTES, MAX_FIELDS
from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db

SEED = {"model": "Qwen/Qwen3-32B-FP8", "context": 8192, "users": 500}


def post_json(client: Client, path: str, body: bytes, address: str = "192.0.2.30") -> Any:
    return client.post(path, body, content_type="application/json", REMOTE_ADDR=address)


def unknown_keys(count: int) -> dict[str, int]:
    return {f"x{i:06d}": 1 for i in range(count)}


@pytest.mark.parametrize("path", ["/api/plans", "/api/recommendations"])
def test_a_body_of_200000_unknown_fields_is_refused_by_its_length(
    client: Client, path: str
) -> None:
    # The body of the measurement in the issue: 2.29 MB with 200,000 unknown keys.
    body = json.dumps({**SEED, **unknown_keys(200_000)}, separators=(",", ":")).encode()
    assert 2_000_000 < len(body) < 2_621_440  # under Django's DATA_UPLOAD_MAX_MEMORY_SIZE
    response = post_json(client, path, body)
    assert response.status_code == 413
    assert response.json() == {
        "field": None,
        "code": "body_too_large",
        "detail": f"the request body is larger than {MAX_BODY_BYTES:,} bytes",
    }


@pytest.mark.parametrize("path", ["/api/plans", "/api/recommendations"])
def test_a_short_body_of_many_fields_is_refused_before_validation(
    client: Client, path: str
) -> None:
    body = json.dumps(unknown_keys(1_000)).encode()  # 13 kB: under the length limit
    assert len(body) <= MAX_BODY_BYTES
    response = post_json(client, path, body)
    assert response.status_code == 400
    assert f"more than {MAX_FIELDS} fields" in response.json()["detail"]


def test_many_unknown_fields_are_answered_in_one_short_line(client: Client) -> None:
    body = json.dumps({**SEED, **unknown_keys(MAX_FIELDS - len(SEED))}).encode()
    response = post_json(client, "/api/plans", body)
    assert response.status_code == 400
    # The first unknown input is named (sizing/inputs.py INPUT_ERRORS["unknown"]).
    assert response.json() == {
        "field": "x000000",
        "code": "unknown",
        "detail": "x000000 is not an input of this request",
    }


@pytest.mark.parametrize("path", ["/api/plans", "/api/recommendations"])
def test_the_rate_limit_counts_bodies_that_are_never_read(
    client: Client, settings: Any, path: str
) -> None:
    settings.RATE_LIMITS = {"estimate": "3/m", "api": "2/m"}
    cache.clear()
    unreadable = b"{" * 100  # not JSON: refused when read, but counted first
    statuses = [post_json(client, path, unreadable).status_code for _ in range(3)]
    assert statuses == [400, 400, 429]
    # A large body over the limit is answered 429 without being read.
    huge = post_json(client, path, json.dumps(unknown_keys(200_000)).encode())
    assert huge.status_code == 429 and huge["Retry-After"] == "60"


def test_the_recommendations_page_is_rate_limited(client: Client, settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True
    settings.RATE_LIMITS = {"estimate": "1/m", "api": "2/m"}
    cache.clear()
    headers = {"HX-Request": "true"}
    first = client.post("/recommendations/", seed_form(), headers=headers)
    assert first.status_code == 200
    second = client.post("/recommendations/", seed_form(), headers=headers)
    assert second.status_code == 429 and second["Retry-After"] == "60"
