"""The JSON API: plan, bundle, and schemathesis against the OpenAPI schema."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
import schemathesis
from django.core.management import call_command
from django.core.wsgi import get_wsgi_application
from django.test import Client
from hypothesis import HealthCheck, settings
from schemathesis.checks import positive_data_acceptance

from sizing.engines.shared_tier import NFS_MOUNT_KINDS, SHARED_KINDS, TIER_FIELDS
from sizing.workload import (
    KV_DTYPES,
    MAX_CONTEXT_TOKENS,
    MAX_GPUS_PER_NODE,
    MAX_NEW_CONVERSATIONS_PER_DAY,
    MAX_USERS,
)

SEED: dict[str, str | int] = {"model": "Qwen/Qwen3-32B-FP8", "context": 8192, "users": 500}


@pytest.mark.django_db
def test_plan_post_returns_the_seed_plan(client: Client) -> None:
    response = client.post("/api/plans", SEED, content_type="application/json")
    assert response.status_code == 200
    summary = response.json()["summary"]
    # Seed document: 125 GiB per instance, 134,217,728,000 bytes for vLLM.
    assert summary["cpu_tier_per_instance_gib"] == 125.0
    assert summary["vllm_cpu_bytes_to_use"] == 134_217_728_000


@pytest.mark.django_db
def test_plan_post_names_the_bad_input(client: Client) -> None:
    response = client.post(
        "/api/plans", {**SEED, "context": 10_000_000}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["field"] == "context_tokens"
    missing = client.post(
        "/api/plans", {"model": "Qwen/Qwen3-32B-FP8"}, content_type="application/json"
    )
    # the first required input the request lacks (sizing/workload.py: context, then users)
    assert missing.status_code == 400
    assert missing.json() == {
        "field": "context_tokens",
        "code": "required",
        "detail": "the context (tokens) is required",
    }


@pytest.mark.parametrize(
    ("method", "url", "allowed"),
    [("get", "/api/plans", "POST"), ("put", "/api/recommendations", "POST")],
)
def test_a_method_an_endpoint_does_not_take_is_a_json_405(
    client: Client, method: str, url: str, allowed: str
) -> None:
    # The OpenAPI schema (/api/openapi.json) lists POST only for these endpoints.
    response = getattr(client, method)(url)
    assert response.status_code == 405 and response["Allow"] == allowed
    assert response.json() == {
        "field": None,
        "code": "method_not_allowed",
        "detail": f"{method.upper()} is not allowed here; use {allowed}",
    }


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [False, True], ids=["production", "debug"])
@pytest.mark.parametrize("megabytes", [3, 30])
def test_oversized_body_is_a_json_413(client: Client, settings, megabytes, debug) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = debug  # with DEBUG on, django-ninja used to answer with a 500 traceback
    body = json.dumps({**SEED, "model": "x" * (megabytes * 10**6)})
    response = client.post("/api/plans", body, content_type="application/json")
    assert response.status_code == 413
    assert response["Content-Type"].startswith("application/json")
    # Django's default DATA_UPLOAD_MAX_MEMORY_SIZE is 2.5 MiB (2,621,440 bytes).
    assert response.json() == {
        "field": None,
        "code": "body_too_large",
        "detail": "request body is larger than 2,621,440 bytes",
    }


MALFORMED = {
    "not UTF-8": (b'{"model": "\xff\xfe", "context": 8192, "users": 500}', "application/json"),
    "nested 100,000 deep": (b"[" * 100_000 + b"]" * 100_000, "application/json"),
    "nested in a field": (
        b'{"model": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "application/json",
    ),
    "1e309": (
        b'{"model": "Qwen/Qwen3-32B-FP8", "context": 1e309, "users": 500}',
        "application/json",
    ),
    "5,000 digits": (
        b'{"model": "Qwen/Qwen3-32B-FP8", "context": 1' + b"0" * 5000 + b', "users": 500}',
        "application/json",
    ),
    "NaN": (b'{"model": "Qwen/Qwen3-32B-FP8", "context": NaN, "users": 500}', "application/json"),
    "-0.0": (
        b'{"model": "Qwen/Qwen3-32B-FP8", "context": 8192, "users": -0.0}',
        "application/json",
    ),
    "lone surrogate": (
        b'{"model": "Qwen/\\ud800x", "context": 8192, "users": 500}',
        "application/json",
    ),
    "empty": (b"", "application/json"),
    "null": (b"null", "application/json"),
    "array": (b"[1, 2]", "application/json"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [False, True], ids=["production", "debug"])
@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_body_is_a_json_4xx(client: Client, settings, name, debug) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = debug
    body, content_type = MALFORMED[name]
    response = client.post("/api/plans", body, content_type=content_type)
    assert response.status_code in (400, 422), response.content[:200]
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["detail"]


NESTED = (
    "the request body is nested too deeply to read: a sizing request is one JSON object of fields"
)


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [False, True], ids=["production", "debug"])
@pytest.mark.parametrize(
    ("name", "detail"),
    [
        ("nested 100,000 deep", NESTED),
        ("nested in a field", NESTED),
        ("not UTF-8", "the request body is not UTF-8 text"),
    ],
)
def test_an_unreadable_body_is_400_in_one_line_saying_why(  # type: ignore[no-untyped-def]
    client: Client, settings, name: str, detail: str, debug: bool
) -> None:
    settings.DEBUG = debug
    body, content_type = MALFORMED[name]
    response = client.post("/api/plans", body, content_type=content_type)
    assert response.status_code == 400
    assert response.json() == {"field": None, "code": "body_unreadable", "detail": detail}


@pytest.mark.django_db
def test_a_number_too_long_to_read_is_refused_at_its_field(client: Client) -> None:
    # 5,001 digits, past Python's default limit of 4,300 on an integer's digits
    # (sys.int_info); the context's limit is sizing/workload.py MAX_CONTEXT_TOKENS.
    body, content_type = MALFORMED["5,000 digits"]
    response = client.post("/api/plans", body, content_type=content_type)
    assert response.status_code == 400
    assert response.json() == {
        "field": "context_tokens",
        "code": "between",
        "detail": "the context (tokens) must be between 1 and 10,000,000, got about 1e+5000",
    }


@pytest.mark.django_db
def test_invalid_json_is_located(client: Client) -> None:
    # The position as Python's json reader gives it (JSONDecodeError: line and column from 1).
    response = client.post("/api/plans", b'{"model": }', content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "field": None,
        "code": "body_unreadable",
        "detail": "the request body is not valid JSON: Expecting value at line 1, column 11",
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        # a browser sends these three cross-site without a CORS preflight
        ("text/plain", json.dumps(SEED).encode()),
        ("application/x-www-form-urlencoded", b"model=Qwen%2FQwen3-32B-FP8&context=8192"),
        ("multipart/form-data; boundary=x", b"--x\r\n--x--\r\n"),
        ("application/xml", b"<plan/>"),
    ],
)
@pytest.mark.parametrize("path", ["/api/plans", "/api/recommendations"])
def test_a_body_not_declared_json_is_415_naming_the_type(
    client: Client, content_type: str, body: bytes, path: str
) -> None:
    response = client.post(path, body, content_type=content_type)
    assert response.status_code == 415
    kind = content_type.split(";")[0]
    assert response.json() == {
        "field": None,
        "code": "unsupported_media_type",
        "detail": f"the body must be JSON: send Content-Type: application/json (got {kind})",
    }
    assert response["Accept-Post"] == "application/json"


@pytest.mark.django_db
def test_json_with_a_charset_or_a_json_suffix_is_read(client: Client) -> None:
    for content_type in ("application/json; charset=utf-8", "application/merge-patch+json"):
        response = client.post("/api/plans", SEED, content_type=content_type)
        assert response.status_code == 200, content_type


@pytest.mark.django_db
@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity", b"1e999"])
def test_a_share_that_is_no_finite_number_is_refused_at_its_field(
    client: Client, literal: bytes
) -> None:
    body = b'{"model": "Qwen/Qwen3-32B-FP8", "context": 8192, "users": 500, "active_share": '
    response = client.post("/api/plans", body + literal + b"}", content_type="application/json")
    assert response.status_code == 400
    error = response.json()
    assert (error["field"], error["code"]) == ("active_share", "above_at_most")
    # the share's limits, sizing/workload.py: above 0 and at most 1
    assert error["detail"].startswith(
        "the share of users active at once must be above 0 and at most 1, got "
    )
    query = client.get("/api/bundle", {**SEED, "active_share": literal.decode()})
    assert query.status_code == 400
    assert query.json() == {**error, "detail": query.json()["detail"]}


@pytest.mark.django_db
def test_negative_zero_is_zero(client: Client) -> None:
    # JSON -0 is the integer 0: no NVMe tier, the seed plan as in the first test.
    body = b'{"model": "Qwen/Qwen3-32B-FP8", "context": 8192, "users": 500, '
    body += b'"new_conversations_per_day": -0}'
    response = client.post("/api/plans", body, content_type="application/json")
    assert response.status_code == 200
    assert response.json()["summary"]["vllm_cpu_bytes_to_use"] == 134_217_728_000


@pytest.mark.django_db
def test_too_many_query_fields_is_a_json_400(client: Client) -> None:
    # Django refuses more than DATA_UPLOAD_MAX_NUMBER_FIELDS (default 1,000) fields.
    query = "&".join(f"f{i}=1" for i in range(1001))
    response = client.get(f"/api/bundle?{query}")
    assert response.status_code == 400 and response.json()["field"] is None


def test_schema_limits_are_the_sizing_limits(client: Client) -> None:
    schema = client.get("/api/openapi.json").json()
    # Limits of sizing/workload.py, which the sizing engine enforces with a 400.
    expected = {
        "context_tokens": MAX_CONTEXT_TOKENS,
        "users": MAX_USERS,
        "gpus_per_node": MAX_GPUS_PER_NODE,
        "new_conversations_per_day": MAX_NEW_CONVERSATIONS_PER_DAY,
    }
    body = schema["components"]["schemas"]["SizingRequest"]["properties"]
    query = {p["name"]: p["schema"] for p in schema["paths"]["/api/bundle"]["get"]["parameters"]}
    for fields in (body, query):
        assert {name: fields[name]["maximum"] for name in expected} == expected
        assert fields["kv_dtype"]["enum"] == sorted(KV_DTYPES)
    assert "413" in schema["paths"]["/api/plans"]["post"]["responses"]


@pytest.mark.django_db
def test_validation_errors_name_the_field_once(client: Client) -> None:
    over = {**SEED, "new_conversations_per_day": MAX_NEW_CONVERSATIONS_PER_DAY + 1}
    response = client.post("/api/plans", over, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["field"] == "new_conversations_per_day"
    # the sizing engine's sentence, the one the CLI prints (sizing/workload.py MAX_USERS)
    users = "the number of users must be between 1 and 1,000,000, got 0"
    zero = client.post("/api/plans", {**SEED, "users": 0}, content_type="application/json")
    assert zero.json() == {"field": "users", "code": "between", "detail": users}
    query = client.get("/api/bundle", {**SEED, "users": 0})
    assert query.status_code == 400
    assert query.json() == {"field": "users", "code": "between", "detail": users}


@pytest.mark.django_db
def test_plan_post_sizes_every_workload_field(client: Client) -> None:
    # The API once answered 200 and ignored these two fields; now it gives what the CLI
    # gives for the same inputs. 4,096 tokens × 128 KiB = 0.5 GiB of shared prompt
    # (seed model, FP8 cache); ⌈500 × 0.3⌉ = 150 users active at once.
    body = {**SEED, "shared_prompt_tokens": 4096, "active_share": 0.3}
    response = client.post("/api/plans", body, content_type="application/json")
    assert response.status_code == 200
    summary = response.json()["summary"]
    assert (summary["shared_prompt_tokens"], summary["shared_prompt_gib"]) == (4096, 0.5)
    assert summary["active_users"] == 150
    out = io.StringIO()
    call_command(
        "size",
        "--model=Qwen/Qwen3-32B-FP8",
        "--context=8192",
        "--users=500",
        "--shared-prompt-tokens=4096",
        "--active-share=0.3",
        "--format=json",
        stdout=out,
    )
    assert summary == json.loads(out.getvalue())["summary"]


@pytest.mark.django_db
@pytest.mark.parametrize("route", ["body", "query"])
def test_an_unknown_field_is_a_400_naming_it(client: Client, route: str) -> None:
    extra = {**SEED, "system_prompt": 4096}
    if route == "body":
        response = client.post("/api/plans", extra, content_type="application/json")
    else:
        response = client.get("/api/bundle", extra)
    assert response.status_code == 400
    assert response.json() == {
        "field": "system_prompt",
        "code": "unknown",
        "detail": "system_prompt is not an input of this request",
    }


@pytest.mark.django_db
def test_context_is_also_read_under_its_own_name(client: Client) -> None:
    own = {"model": SEED["model"], "context_tokens": 8192, "users": 500}
    response = client.post("/api/plans", own, content_type="application/json")
    assert response.status_code == 200
    assert response.json()["summary"]["cpu_tier_per_instance_gib"] == 125.0  # seed


@pytest.mark.django_db
def test_a_tensor_parallel_size_that_cannot_hold_a_request_names_the_field(
    client: Client,
) -> None:
    # Qwen3-32B-FP8 has 64 attention heads and 8 KV heads: TP 3 divides neither
    # (vLLM ModelConfig.verify_with_parallel_config).
    body = {**SEED, "gpus_per_node": 3, "tensor_parallel_size": 3}
    response = client.post("/api/plans", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["field"] == "tensor_parallel_size"
    # TP 2 on the seed node: two replicas of two GPUs instead of four of one.
    body = {**SEED, "tensor_parallel_size": 2}
    summary = client.post("/api/plans", body, content_type="application/json").json()["summary"]
    assert (summary["tensor_parallel_size"], summary["replicas"]) == (2, 2)


@pytest.mark.django_db
def test_bundle_get_returns_a_zip(client: Client) -> None:
    response = client.get("/api/bundle", {**SEED, "engine": "dynamo", "shared": "s3"})
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        names = archive.namelist()
    assert "node1/dynamo/frontend.sh" in names


schema = schemathesis.openapi.from_wsgi("/api/openapi.json", get_wsgi_application())


@pytest.fixture
def offline_hub(settings):  # type: ignore[no-untyped-def]
    settings.HF_HUB_OFFLINE = True
    return settings


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case, offline_hub) -> None:  # type: ignore[no-untyped-def]
    # A well-formed request may still be unsizable (unknown model offline, a context the
    # model cannot hold): that is a documented 400, so "valid data accepted" is not checked.
    case.call_and_validate(excluded_checks=[positive_data_acceptance])


def _bundle_files(response) -> dict[str, str]:  # type: ignore[no-untyped-def]
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        return {n: archive.read(n).decode() for n in archive.namelist()}


@pytest.mark.django_db
def test_bundle_get_takes_every_tier_option(client: Client) -> None:
    # The NetApp seed's tiers: ONTAP pNFS over RDMA (NFS 4.1, 256 KiB rsize/wsize), a
    # StorageGRID endpoint on plain http with its port, decode blocks offloaded.
    nfs = client.get(
        "/api/bundle",
        {
            **SEED,
            "engine": "vllm",
            "shared": "nfs",
            "nfs_mount_kind": "pnfs-rdma",
            "nfs_server": "ontap.example.net",
            "offload_decode": "true",
        },
    )
    assert nfs.status_code == 200, nfs.content[:300]
    files = _bundle_files(nfs)
    mount = next(t for n, t in files.items() if n.endswith("mount-shared.sh"))
    assert "vers=4.1,proto=rdma,trunkdiscovery" in mount and "rsize=262144" in mount
    assert "ontap.example.net:/export/kvcache" in mount
    config = json.loads(files["node1/vllm/instance0/kv-transfer-config.json"])
    assert config["kv_connector_extra_config"]["offload_prompt_only"] is False
    s3 = client.get(
        "/api/bundle",
        {
            **SEED,
            "engine": "lmcache",
            "shared": "s3",
            "s3_endpoint": "http://sg.example.net:8082",
            "python_hash_seed": 7,
        },
    )
    assert s3.status_code == 200, s3.content[:300]
    files = _bundle_files(s3)
    yaml_text = next(t for n, t in files.items() if n.endswith("lmcache.yaml"))
    assert "disable_tls: true" in yaml_text and "sg.example.net:8082" in yaml_text
    assert "export PYTHONHASHSEED=7" in files["node1/lmcache/instance0/serve.sh"]
    tls = client.get(
        "/api/bundle",
        {**SEED, "engine": "lmcache", "shared": "s3", "s3_endpoint": "sg.example.net:10443"},
    )
    yaml_text = next(t for n, t in _bundle_files(tls).items() if n.endswith("lmcache.yaml"))
    assert "sg.example.net:10443" in yaml_text and "disable_tls" not in yaml_text


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("nfs_mount_kind", "rdma"),
        ("shared", "ceph"),
        ("offload_decode", "sometimes"),
        ("python_hash_seed", "-1"),
        ("s3_endpoint", "ftp://sg.example.net"),
        ("s3_endpoint", "sg.example.net:99999"),
        ("nfs_mount", "relative/path"),
    ],
)
def test_a_tier_option_it_cannot_use_is_a_400_naming_it(
    client: Client, field: str, value: str
) -> None:
    response = client.get("/api/bundle", {**SEED, "shared": "s3", field: value})
    assert response.status_code == 400
    assert response.json()["field"] == field


def test_the_schema_lists_every_tier_option(client: Client) -> None:
    schema = client.get("/api/openapi.json").json()
    query = {p["name"]: p["schema"] for p in schema["paths"]["/api/bundle"]["get"]["parameters"]}
    assert set(TIER_FIELDS) <= set(query)
    assert query["nfs_mount_kind"]["enum"] == list(NFS_MOUNT_KINDS)
    assert query["shared"]["enum"] == list(SHARED_KINDS)
    assert query["offload_decode"]["type"] == "boolean"
    assert query["python_hash_seed"]["maximum"] == 4_294_967_295  # Python's PYTHONHASHSEED
    assert "TLS unless http://" in query["s3_endpoint"]["description"]


@pytest.mark.django_db
def test_llm_d_is_an_engine_of_the_api(client: Client) -> None:
    schema = client.get("/api/openapi.json").json()
    query = {p["name"]: p["schema"] for p in schema["paths"]["/api/bundle"]["get"]["parameters"]}
    assert "llm-d" in query["engine"]["enum"]
    response = client.get("/api/bundle", {**SEED, "engine": "llm-d", "shared": "nfs"})
    assert response.status_code == 200
    names = set(_bundle_files(response))
    assert {"llm-d/modelservice-values.yaml", "llm-d/inferencepool-values.yaml"} <= names


@pytest.mark.parametrize(
    ("changes", "detail"),
    [
        # hardware.json: HGX H100 baseboards come with 4 or 8 GPUs; the 4U chassis takes
        # at most 8 GPUs (sizing/hardware/chassis.py), as the page refuses them.
        ({"gpu": "h100-sxm", "gpus_per_node": 3}, "comes on baseboards of 4, 8 GPUs only"),
        ({"gpus_per_node": 16}, "holds at most 8 GPUs per node"),
    ],
)
def test_a_node_that_cannot_be_built_is_a_400(
    client: Client, changes: dict[str, Any], detail: str
) -> None:
    response = client.post("/api/plans", {**SEED, **changes}, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["field"] == "gpus_per_node" and detail in response.json()["detail"]


@pytest.mark.django_db
def test_a_card_no_chassis_takes_is_sized_and_marked_not_sold(client: Client) -> None:
    # 2 × RTX 4090 (open-air cooler): the 4U chassis takes blower and passive cards only
    # (sizing/hardware/chassis.py), so the builder does not sell the node; the API sizes
    # it all the same (plan, tiers, TTFT) and says why in the summary.
    body = {**SEED, "gpu": "rtx-4090", "gpus_per_node": 2, "model": "Qwen/Qwen3-8B"}
    response = client.post("/api/plans", body, content_type="application/json")
    assert response.status_code == 200
    s = response.json()["summary"]
    assert s["node_buildable"] is False
    assert s["node_not_buildable_reason"] == (
        "the GPU rtx-4090 (NVIDIA GeForce RTX 4090, open-air cooling) does not go into the "
        "CHS-SP5-4U8G chassis, which takes blower, passive GPUs only"
    )
    assert s["ttft_miss_ms"] > 0 and s["ttft_band_pct"] == 56
    seed = client.post("/api/plans", SEED, content_type="application/json").json()["summary"]
    assert seed["node_buildable"] is True and seed["node_not_buildable_reason"] is None
    # More cards than the chassis has slots stays refused, whatever the card.
    over = client.post("/api/plans", {**body, "gpus_per_node": 16}, content_type="application/json")
    assert over.status_code == 400 and over.json()["field"] == "gpus_per_node"
