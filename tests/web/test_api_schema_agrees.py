"""The OpenAPI schema says what the server takes: GPUs as an enum, whole numbers as
integers (``11.0`` included, as JSON Schema's ``integer`` includes it)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from sizing import workload
from sizing.hardware import catalog
from sizing.inputs import MAX_TOKENS

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
    assert refused.status_code == 400
    assert refused.json()["field"] == "gpu"


def test_a_whole_number_written_with_a_fraction_is_the_same_request(client: Client) -> None:
    plain = post(client)
    written = post(client, users=500.0, context=8192.0)
    assert written.status_code == plain.status_code == 200
    # The seed example (docs/sizing.md): 204 conversations on the GPUs, either way.
    assert written.json()["summary"] == plain.json()["summary"]
    assert written.json()["summary"]["conversations_on_gpus"] == 204


@pytest.mark.parametrize("value", [500.5, True, "500"])
def test_what_the_schema_refuses_the_server_refuses(client: Client, value: Any) -> None:
    refused = post(client, users=value)
    assert refused.status_code == 400
    assert refused.json()["field"] == "users"


def _limit_keywords(node: Any) -> set[str]:
    """The pydantic-only limit keywords (``ge``, ``le``, ``gt``, ``lt``) anywhere in ``node``."""
    if isinstance(node, dict):
        found = {key for key in node if key in {"ge", "le", "gt", "lt"}}
        for value in node.values():
            found |= _limit_keywords(value)
        return found
    if isinstance(node, list):
        return set().union(*(_limit_keywords(value) for value in node))
    return set()


def test_optional_numbers_carry_json_schema_limits(client: Client) -> None:
    schema = client.get("/api/openapi.json").json()
    schemas = schema["components"]["schemas"]
    assert _limit_keywords(schemas) == set()
    props = schemas["SizingRequest"]["properties"]
    # sizing/workload.py: TP 1 to MAX_GPUS_PER_NODE (16), host memory 1 to
    # MAX_HOST_MEMORY_GB (100,000 GB); sizing/traffic/profile.py: output tokens 0 to MAX_TOKENS.
    limits = {
        "tensor_parallel_size": (1, workload.MAX_GPUS_PER_NODE),
        "max_host_memory_gb": (1, workload.MAX_HOST_MEMORY_GB),
        "output_tokens": (0, MAX_TOKENS),
    }
    for name, (low, high) in limits.items():
        number, null = props[name]["anyOf"]
        assert number == {"type": "integer", "minimum": low, "maximum": high}, name
        assert null == {"type": "null"}
    # what the schema says, the server does: one past the maximum is refused (400)
    refused = post(client, tensor_parallel_size=workload.MAX_GPUS_PER_NODE + 1)
    assert refused.status_code == 400
    assert refused.json()["field"] == "tensor_parallel_size"
