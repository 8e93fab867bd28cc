"""The OpenAPI schema says what the server takes: GPUs as an enum, whole numbers as
integers (``11.0`` included, as JSON Schema's ``integer`` includes it)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from sizing import catalog

pytestmark = pytest.mark.django_db

BODY = {"model": "Qwen/Qwen3-32B-FP8", "context": 8192, "users": 500}


@pytest.fixture(autouse=True)
def _offline(settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True


def post(client: Client, **changes: Any) -> Any:
    return client.post("/api/plans", {**BODY, **changes}, content_type="application/json")


def test_the_gpu_is_an_enum_of_the_catalog_and_others_are_refused(client: Client) -> None:
    schema = client.get("/api/openapi.json").json()
    gpu = schema["components"]["schemas"]["SizingRequest"]["properties"]["gpu"]
    assert sorted(gpu["enum"]) == sorted(catalog.gpus())
    refused = post(client, gpu="a-gpu-nobody-makes")
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["loc"] == ["body", "gpu"]


def test_a_whole_number_written_with_a_fraction_is_the_same_request(client: Client) -> None:
    plain = post(client)
    written = post(client, users=500.0, context=8192.0)
    assert written.status_code == plain.status_code == 200
    # The seed example (DESIGN §3): 204 conversations on the GPUs, either way.
    assert written.json()["summary"] == plain.json()["summary"]
    assert written.json()["summary"]["conversations_on_gpus"] == 204


@pytest.mark.parametrize("value", [500.5, True, "500"])
def test_what_the_schema_refuses_the_server_refuses(client: Client, value: Any) -> None:
    assert post(client, users=value).status_code == 422
