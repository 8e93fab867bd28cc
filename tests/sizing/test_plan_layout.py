"""The part of a plan that the users leave alone, kept across plans: the layout of one
customer typing another number of users is the one computed afresh, and no other input
is served from it."""

from __future__ import annotations

import copy

import pytest

from sizing.errors import SizingError
from sizing.memory.gpu_budget import BudgetRule
from sizing.model.spec import from_catalog
from sizing.plan.memory_layout import memory_layout
from sizing.plan.orchestrator import PlanRequest, make_plan
from sizing.workload import SEED_WORKLOAD


def test_a_layout_kept_for_other_users_is_the_fresh_one() -> None:
    model = from_catalog(SEED_WORKLOAD.model)
    rule = BudgetRule()
    kept = memory_layout(model, SEED_WORKLOAD, "epyc-9005-2s", rule)
    typed = memory_layout(model, SEED_WORKLOAD.replace(users=731), "epyc-9005-2s", rule)
    assert typed is kept
    fresh = memory_layout(copy.deepcopy(model), SEED_WORKLOAD, "epyc-9005-2s", rule)
    assert fresh is not kept and fresh == kept
    # The plans made from the kept layout are those made from a fresh model object.
    for users in (500, 731, 20_000):
        work = SEED_WORKLOAD.replace(users=users)
        assert repr(make_plan(PlanRequest(model=model, workload=work))) == repr(
            make_plan(PlanRequest(model=copy.deepcopy(model), workload=work))
        ).replace(repr(copy.deepcopy(model)), repr(model))


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
    kept = memory_layout(model, SEED_WORKLOAD, "epyc-9005-2s", rule)
    other = SEED_WORKLOAD.replace(**change)
    layout = memory_layout(model, other, "epyc-9005-2s", rule)
    assert layout is not kept  # computed for its own inputs (equal where they agree)
    assert layout == memory_layout(copy.deepcopy(model), other, "epyc-9005-2s", rule)


def test_an_equal_figure_of_another_type_is_another_key() -> None:
    model = from_catalog(SEED_WORKLOAD.model)
    as_int = memory_layout(
        model, SEED_WORKLOAD.replace(max_host_memory_gb=1024), "epyc-9005-2s", BudgetRule()
    )
    as_float = memory_layout(
        model, SEED_WORKLOAD.replace(max_host_memory_gb=1024.0), "epyc-9005-2s", BudgetRule()
    )
    assert as_float is not as_int


def test_an_unknown_gpu_is_refused_every_time() -> None:
    model = from_catalog(SEED_WORKLOAD.model)
    for _ in range(2):
        with pytest.raises(SizingError):
            memory_layout(
                model, SEED_WORKLOAD.replace(gpu="no-such-gpu"), "epyc-9005-2s", BudgetRule()
            )
