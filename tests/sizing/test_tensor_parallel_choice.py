"""An explicit tensor parallel size and expert parallelism, set on the workload.

Expected values: the seed example (docs/sizing.md §3: 51.09 GiB of KV cache per card at TP 1)
and vLLM's divisibility rule (``ModelConfig.verify_with_parallel_config``: TP divides the
attention heads, TP and the KV heads divide one another).
"""

from __future__ import annotations

import pytest

from sizing.errors import InfeasibleError, SizingError
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import PlanRequest, make_plan
from sizing.workload import SEED_WORKLOAD, Workload


def seed(**changes: object) -> PlanRequest:
    return PlanRequest(
        model=from_catalog(SEED_WORKLOAD.model), workload=SEED_WORKLOAD.replace(**changes)
    )


def test_a_given_tp_is_the_plan_s_tp() -> None:
    chosen = make_plan(seed()).parallelism
    assert (chosen.tensor_parallel_size, chosen.total_replicas) == (1, 4)  # seed layout
    two = make_plan(seed(tensor_parallel_size=2)).parallelism
    assert (two.tensor_parallel_size, two.total_replicas) == (2, 2)
    # Weights split over two cards leave more cache per card: 0.9 × 95.6 − 3 − 16.0.
    assert two.kv_cache_gib_per_gpu > chosen.kv_cache_gib_per_gpu


def test_a_tp_vllm_refuses_is_a_field_error() -> None:
    # Qwen3-32B: 64 attention heads, 8 KV heads; on 3 GPUs only TP 1 divides both.
    with pytest.raises(SizingError) as err:
        make_plan(seed(gpus_per_node=3, tensor_parallel_size=3))
    assert (err.value.field, err.value.code) == ("tensor_parallel_size", "tp_invalid")


def test_a_tp_that_cannot_hold_one_request_is_a_field_error() -> None:
    # Llama-3.3-70B in 16 bit (about 131 GiB of weights) does not fit one L40S at TP 1,
    # while the plan alone would choose TP 4 on four cards.
    spec = from_catalog("meta-llama/Llama-3.3-70B-Instruct")
    work = Workload(model=spec.repo_id, context_tokens=8192, users=10, gpu="l40s")
    assert make_plan(PlanRequest(model=spec, workload=work)).parallelism.tensor_parallel_size > 1
    with pytest.raises(InfeasibleError) as err:
        make_plan(PlanRequest(model=spec, workload=work.replace(tensor_parallel_size=1)))
    assert err.value.field == "tensor_parallel_size"
    assert err.value.fix_notes[0].code == "plan_chooses_tp"


def test_expert_parallel_is_read_from_the_workload() -> None:
    # Qwen3-30B-A3B is a MoE model: with EP the experts are spread over all 4 GPUs.
    spec = from_catalog("Qwen/Qwen3-30B-A3B")
    work = Workload(model=spec.repo_id, context_tokens=8192, users=100, gpu="l40s")
    plain = make_plan(PlanRequest(model=spec, workload=work)).parallelism
    spread = make_plan(PlanRequest(model=spec, workload=work.replace(expert_parallel=True)))
    assert plain.expert_parallel_size == 1
    assert spread.parallelism.expert_parallel_size == 4
