"""The part of a plan that the users leave alone, shared by the plans of one search
through its memo: the layout of another number of users is the one computed afresh, and
no other input (nor another model under the same name) is served from it."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from sizing.errors import SizingError
from sizing.memory.gpu_budget import BudgetRule
from sizing.model.spec import from_catalog
from sizing.plan.memo import PlanMemo
from sizing.plan.memory_layout import memory_layout
from sizing.plan.orchestrator import PlanRequest, make_plan
from sizing.workload import SEED_WORKLOAD


def test_a_layout_kept_for_other_users_is_the_fresh_one() -> None:
    model = from_catalog(SEED_WORKLOAD.model)
    rule = BudgetRule()
    memo = PlanMemo()
    kept = memo.layout(model, SEED_WORKLOAD, "epyc-9005-2s", rule)
    typed = memo.layout(model, SEED_WORKLOAD.replace(users=731), "epyc-9005-2s", rule)
    assert typed is kept
    # A copy of the model is equal to it: the memo serves it the same layout.
    assert memo.layout(copy.deepcopy(model), SEED_WORKLOAD, "epyc-9005-2s", rule) is kept
    fresh = memory_layout(copy.deepcopy(model), SEED_WORKLOAD, "epyc-9005-2s", rule)
    assert fresh is not kept and fresh == kept
    # The plans made with the memo are those made without one.
    for users in (500, 731, 20_000):
        request = PlanRequest(model=model, workload=SEED_WORKLOAD.replace(users=users))
        assert repr(make_plan(request, memo)) == repr(make_plan(request))


@pytest.mark.parametrize(
    "change",
    [
        {"gpus_per_node": 8},
        {"context_tokens": 16384},
        {"kv_dtype": "auto"},
        {"shared_prompt_tokens": 1000},
        {"max_host_memory_gb": 1024},
        {"new_conversations_per_day": 100_000},
        {"serving_engine": "sglang"},
        {"tensor_parallel_size": 2},
    ],
)
def test_another_input_is_not_served_from_the_kept_layout(change: dict[str, object]) -> None:
    model = from_catalog(SEED_WORKLOAD.model)
    rule = BudgetRule()
    memo = PlanMemo()
    kept = memo.layout(model, SEED_WORKLOAD, "epyc-9005-2s", rule)
    other = SEED_WORKLOAD.replace(**change)
    layout = memo.layout(model, other, "epyc-9005-2s", rule)
    assert layout is not kept  # computed for its own inputs (equal where they agree)
    assert layout == memory_layout(copy.deepcopy(model), other, "epyc-9005-2s", rule)


def test_another_model_under_the_same_name_is_another_key() -> None:
    # An upload named like a catalog model, with the weight size of it but the config of
    # another (Llama-3.1-8B: 8 KV heads of 128 over 32 layers, against Qwen3-32B's 8 of
    # 128 over 64): the same hash, not equal, so the memo sizes it on its own.
    model = from_catalog(SEED_WORKLOAD.model)
    llama = from_catalog("meta-llama/Llama-3.1-8B-Instruct")
    named_alike = replace(model, config=llama.config, architecture=llama.architecture)
    assert hash(named_alike) == hash(model) and named_alike != model
    memo = PlanMemo()
    kept = memo.layout(model, SEED_WORKLOAD, "epyc-9005-2s", BudgetRule())
    other = memo.layout(named_alike, SEED_WORKLOAD, "epyc-9005-2s", BudgetRule())
    assert other.kv_bytes_per_token * 2 == kept.kv_bytes_per_token
    assert other == memory_layout(named_alike, SEED_WORKLOAD, "epyc-9005-2s", BudgetRule())


def test_an_equal_figure_of_another_type_is_another_key() -> None:
    model = from_catalog(SEED_WORKLOAD.model)
    memo = PlanMemo()
    as_int = memo.layout(
        model, SEED_WORKLOAD.replace(max_host_memory_gb=1024), "epyc-9005-2s", BudgetRule()
    )
    as_float = memo.layout(
        model, SEED_WORKLOAD.replace(max_host_memory_gb=1024.0), "epyc-9005-2s", BudgetRule()
    )
    assert as_float is not as_int


def test_an_unknown_gpu_is_refused_every_time() -> None:
    model = from_catalog(SEED_WORKLOAD.model)
    memo = PlanMemo()
    for _ in range(2):
        with pytest.raises(SizingError):
            memo.layout(
                model, SEED_WORKLOAD.replace(gpu="no-such-gpu"), "epyc-9005-2s", BudgetRule()
            )
