"""The plan cached at the border: a repeated workload is served from Django's cache, a
different model or revision is another key, and a failing cache changes nothing but the
speed."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import pytest
from django.core.cache import cache

from configurator.planning.services import plan_create, plan_key
from sizing.errors import SizingError
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import PlanRequest, make_plan
from sizing.summary import plan_summary
from sizing.workload import SEED_WORKLOAD
from tests.web.ports import free_port

QWEN = from_catalog(SEED_WORKLOAD.model)


@pytest.fixture
def empty_cache() -> None:
    cache.clear()


def test_a_repeated_workload_is_served_from_the_cache(empty_cache: None) -> None:
    work = SEED_WORKLOAD.replace(users=613)
    key = plan_key(work, QWEN)
    assert cache.get(key) is None
    first = plan_create(work, model=QWEN)
    stored = cache.get(key)
    assert stored is not None and stored == first  # the plan the first request sized
    again = plan_create(work, model=QWEN)
    assert again is not first and again == first  # unpickled from the cache
    fresh = make_plan(PlanRequest(model=QWEN, workload=work))
    assert plan_summary(again) == plan_summary(fresh)
    # The evaluator came along: the charts of a cached plan are those of a fresh one.
    assert again.serving is not None and again.serving.evaluator is not None
    assert fresh.serving is not None and fresh.serving.evaluator is not None
    assert again.serving.evaluator(3) == fresh.serving.evaluator(3)


def test_every_input_and_the_model_are_in_the_key() -> None:
    key = plan_key(SEED_WORKLOAD, QWEN)
    assert plan_key(SEED_WORKLOAD.replace(users=501), QWEN) != key
    # 1024 and 1024.0 are equal figures that a note may quote differently.
    assert plan_key(SEED_WORKLOAD.replace(max_host_memory_gb=1024), QWEN) != plan_key(
        SEED_WORKLOAD.replace(max_host_memory_gb=1024.0), QWEN
    )
    # The same name read at another Hub revision, or with another config (an upload).
    assert plan_key(SEED_WORKLOAD, replace(QWEN, source="Hugging Face Hub, commit 0123")) != key
    llama = from_catalog("meta-llama/Llama-3.1-8B-Instruct")
    named_alike = replace(QWEN, config=llama.config, architecture=llama.architecture)
    assert plan_key(SEED_WORKLOAD, named_alike) != key
    assert plan_key(SEED_WORKLOAD, from_catalog(SEED_WORKLOAD.model)) == key


def test_a_refused_workload_is_refused_every_time(empty_cache: None) -> None:
    work = SEED_WORKLOAD.replace(context_tokens=10_000_000)  # beyond the model's 40,960
    for _ in range(2):
        with pytest.raises(SizingError):
            plan_create(work, model=QWEN)


def test_a_dead_cache_changes_nothing_but_the_speed(settings: Any, caplog: Any) -> None:
    settings.CACHES = {
        **settings.CACHES,
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",
        },
    }
    work = SEED_WORKLOAD.replace(users=617)
    with caplog.at_level(logging.WARNING, logger="configurator.clients"):
        plan = plan_create(work, model=QWEN)
    assert plan_summary(plan) == plan_summary(make_plan(PlanRequest(model=QWEN, workload=work)))
    outages = [r.getMessage() for r in caplog.records if "cache unavailable" in r.getMessage()]
    assert len(outages) == 2 and all(m.startswith("plan cache") for m in outages)  # get, set
