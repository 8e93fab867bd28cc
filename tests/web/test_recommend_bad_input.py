"""Bad input to ``recommend`` and ``POST /api/recommendations`` is refused as ``size``
and ``POST /api/plans`` refuse it, not reported as "no configuration meets the workload"."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from configurator.catalog.services import pricelist_load_demo

BASE = ["--model", "Qwen/Qwen3-32B-FP8", "--users", "500"]
BODY = {"model": "Qwen/Qwen3-32B-FP8", "context": 8192, "users": 500}
# Qwen3-32B has 64 attention heads and 8 KV heads (sizing/data model facts): on the
# default 4 GPUs per node the valid TP sizes are 1, 2 and 4, so 3 is refused. A context of
# one token spread over the default 8 turns leaves 0 new prompt tokens per turn
# (sizing/traffic.py, the derived default).
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
