"""Bad input to ``recommend`` and ``POST /api/recommendations`` is refused as ``size``
and ``POST /api/plans`` refuse it, not reported as "no configuration meets the workload"."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from configurator.catalog.services import pricelist_load_demo

BASE = ["--model", "Qwen/Qwen3-32B-FP8", "--users", "500"]
BODY = {"model": "Qwen/Qwen3-32B-FP8", "context": 8192, "users": 500}
# Qwen3-32B has 64 attention heads and 8 KV heads (sizing/data model facts): on the
# default 4 GPUs per node the valid TP sizes are 1, 2 and 4, so 3 is refused. A context of
# one token spread over the default 8 turns leaves 0 new prompt tokens per turn
# (sizing/traffic/profile.py, the derived default).
CASES = [
    (["--context", "1"], {"context": 1}, "--context", "context_tokens"),
    (
        ["--context", "8192", "--tensor-parallel-size", "3"],
        {"tensor_parallel_size": 3},
        "--tensor-parallel-size",
        "tensor_parallel_size",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("args", "body", "flag", "field"), CASES)
def test_cli_refuses_as_size_does(args: list[str], body: dict, flag: str, field: str) -> None:
    pricelist_load_demo()
    messages = []
    for command in ("size", "recommend"):
        with pytest.raises(CommandError) as err:
            call_command(command, *BASE, *args)
        assert err.value.returncode == 2
        assert str(err.value).startswith(f"{flag}: ")
        assert "binds" not in str(err.value) and "\n" not in str(err.value)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


@pytest.mark.django_db
@pytest.mark.parametrize(("args", "body", "flag", "field"), CASES)
def test_api_refuses_as_plans_does(
    client: Client, args: list[str], body: dict, flag: str, field: str
) -> None:
    pricelist_load_demo()
    answers = [
        client.post(path, {**BODY, **body}, content_type="application/json")
        for path in ("/api/plans", "/api/recommendations")
    ]
    for answer in answers:
        assert answer.status_code == 400
        assert answer.json()["field"] == field
    assert answers[0].json() == answers[1].json()


@pytest.mark.django_db
def test_an_unknown_gpu_gets_the_same_400_on_both_endpoints(client: Client) -> None:
    pricelist_load_demo()
    plans = client.post("/api/plans", {**BODY, "gpu": "gtx-1080"}, content_type="application/json")
    searched = client.post(
        "/api/recommendations", {**BODY, "gpus": ["gtx-1080"]}, content_type="application/json"
    )
    assert plans.status_code == searched.status_code == 400
    plan_error, search_error = plans.json(), searched.json()
    assert plan_error["field"] == "gpu" and search_error["field"] == "gpus.0"
    assert {**plan_error, "field": None} == {**search_error, "field": None}
    assert plan_error["code"] == "gpu_unknown"
    assert "unknown GPU 'gtx-1080'" in search_error["detail"]


def test_binding_words_name_the_target_with_its_value() -> None:
    from django.utils.translation import override

    from configurator.planning.bindings import binding_words

    # 2,000 ms and 200 ms: the default TTFT p95 and TPOT targets (sizing/traffic/profile.py).
    targets = {"ttft_p95_ms": 2000.0, "tpot_ms": 200.0}
    with override("en"):
        assert binding_words("TTFT p95", **targets) == "the TTFT p95 target of 2,000 ms"
        assert binding_words("TPOT", **targets) == "the TPOT target of 200 ms"
        assert binding_words("NVMe endurance", **targets) == "NVMe endurance"
    with override("de"):
        assert binding_words("TTFT p95", **targets) == "das TTFT-p95-Ziel von 2.000 ms"


@pytest.mark.django_db
def test_a_valid_workload_nothing_meets_names_the_binding_in_words(
    capsys: pytest.CaptureFixture[str], client: Client
) -> None:
    pricelist_load_demo()
    # 5,000 users all active at once: no node of 2 to 8 GPUs keeps them all on the GPUs
    # (tests/web/test_recommend.py, the same workload).
    args = [*BASE[:2], "--context", "8192", "--users", "5000", "--active-share", "1"]
    call_command("recommend", *args)
    out = capsys.readouterr().out
    assert "No configuration meets the workload: GPU capacity for active users binds." in out
    body = {**BODY, "users": 5000, "active_share": 1}
    answer = client.post("/api/recommendations", body, content_type="application/json")
    assert answer.status_code == 200
    data = answer.json()
    assert data["configurations"] == []
    assert data["binding_text"] == "GPU capacity for active users"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("flag", "words", "target"),
    [
        ("--ttft-p95-ms", "the TTFT p95 target of 10 ms", "TTFT p95"),
        ("--tpot-ms", "the TPOT target of 1 ms", "TPOT"),
    ],
)
def test_a_latency_target_no_configuration_reaches_names_it_and_one_relaxed_target(
    capsys: pytest.CaptureFixture[str], flag: str, words: str, target: str
) -> None:
    pricelist_load_demo()
    # 10 ms TTFT p95 and 1 ms TPOT lie below what one request takes without any load on
    # every priced GPU: each configuration is sized for 1.5 × its own floor
    # (sizing/serving/targets.py), so the search sizes all again for the lowest of those,
    # one relaxed target for all (sizing/search/nearest.py), and lists the configurations
    # that meet it, each still marked as missing the customer's target.
    value = "10" if flag == "--ttft-p95-ms" else "1"
    args = [*BASE[:2], "--context", "8192", "--users", "500", flag, value]
    call_command("recommend", *args, "--format", "json")
    data = json.loads(capsys.readouterr().out)
    assert data["binding"] == target and data["binding_text"] == words
    key = "ttft_p95_ms" if target == "TTFT p95" else "tpot_ms"
    relaxed = data["relaxed_targets"][key]
    assert relaxed > float(value)
    assert data["configurations"]
    for c in data["configurations"]:
        assert c["meets_targets"] is False and c[key] <= relaxed
        miss = next(r for r in c["why_codes"] if r["code"] == "misses_ms")
        assert miss["values"]["target"] == target and miss["values"]["limit"] == float(value)
    call_command("recommend", *args)
    out = capsys.readouterr().out
    assert out.count(f"No configuration meets {words}") == 1
