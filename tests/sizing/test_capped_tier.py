"""A CPU tier cut by the customer's host-memory limit holds only what its bytes hold.

The reviewer's example (``manage.py size --model Qwen/Qwen3-32B-FP8 --context 8192
--users 500 --gpus-per-node 2 --tensor-parallel-size 2 --max-host-memory-gb 384
--without-shared-tier``, the RTX PRO 6000 SE, FP8 KV cache), derived by hand:

- KV per token: 64 layers × 8 KV heads × 128 dims × 2 (K and V) × 1 byte (FP8) =
  131,072 B (Qwen3-32B ``config.json``); a conversation of 8,192 tokens = 2^30 B =
  1 GiB. TP 2 splits the 8 KV heads 4 + 4, so the ranks store 1 GiB per conversation
  together (no head replicated, ``sizing.memory.rank_bytes``).
- Host memory: 24 × 16 GB = 384 GB; the reserve beside the pinned tier equals the GPU
  memory, 2 × 96 GB = 192 GB (``sizing.memory.host_memory``), so the tier gets 192 GB =
  192 × 10^9 / 2^30 = 178.81 GiB.
- The tier holds ⌊178.81 / 1⌋ = 178 whole conversations; the GPUs hold 134
  (``conversations_on_gpus``, 67 per card at TP 2), so 500 − 134 = 366 rest; 178 of
  them in the CPU tier, 366 − 178 = 188 recomputed when their users return.
- vLLM gets the 178 conversations' bytes in whole GiB: ``--kv-offloading-size 178``;
  the customer reads 178 GiB, not 179 (``sizing.units.whole_gib``).
"""

from __future__ import annotations

import pytest

from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import Plan, make_plan
from sizing.summary import plan_summary
from sizing.units import whole_gib
from tests.factories import plan_request

EXAMPLE = {
    "context_tokens": 8192,
    "users": 500,
    "gpu": "rtx-pro-6000-se",
    "gpus_per_node": 2,
    "tensor_parallel_size": 2,
    "kv_dtype": "fp8",
    "max_host_memory_gb": 384,
}


@pytest.fixture(scope="module")
def capped() -> Plan:
    model = from_catalog("Qwen/Qwen3-32B-FP8")
    return make_plan(plan_request(model=model, without_shared_tier=True, **EXAMPLE))


def test_shared_tier_holds_what_the_cut_tier_leaves_out() -> None:
    # The same plan with the shared tier (it holds every user once, sizing/serving/serve.py):
    # the 366 - 178 = 188 the CPU tier leaves out rest there and none is recomputed.
    plan = make_plan(plan_request(model=from_catalog("Qwen/Qwen3-32B-FP8"), **EXAMPLE))
    s = plan_summary(plan)
    assert s["shared_tier_tb"]
    assert (s["conversations_in_cpu_tier"], s["conversations_in_shared_tier"]) == (178, 188)
    assert s["conversations_recomputed"] == 0


def test_capped_tier_counts_what_its_bytes_hold(capped: Plan) -> None:
    s = plan_summary(capped)
    assert s["conversation_gib"] == 1.0
    assert s["cpu_tier_total_gib"] == pytest.approx(192e9 / 2**30, abs=0.01)
    assert s["conversations_on_gpus"] == 134
    assert s["resting_conversations"] == 366
    assert s["conversations_in_cpu_tier"] == 178
    assert s["conversations_recomputed"] == 188
    assert s["conversations_in_shared_tier"] == 0
    assert s["vllm_kv_offloading_size_gib"] == 178


def test_capped_tier_recomputes_as_the_hit_rate_model_misses(capped: Plan) -> None:
    # The hit-rate model misses returns once the tier is full; the counts then leave
    # conversations to recompute. Recent conversations return more often (LRU), so the
    # share of returns that miss is no larger than the share of conversations left out.
    s = plan_summary(capped)
    assert s["miss_rate"] > 0
    assert s["conversations_recomputed"] / s["users"] >= s["miss_rate"]


def test_tier_gib_reads_what_the_engine_gets(capped: Plan) -> None:
    assert whole_gib(capped.cpu_tier.total_gib) == 178
    assert capped.vllm_offload is not None
    assert whole_gib(capped.cpu_tier.total_gib) <= capped.vllm_offload.kv_offloading_size_gib
    # The seed's tier (500 × 1 GiB) stays 500 GiB; just below a whole GiB rounds down.
    assert whole_gib(500.0) == 500
    assert whole_gib(500 - 1e-9) == 500
    assert whole_gib(178.999) == 178


def test_on_a_card_estimated_from_its_family_the_hit_rates_count_the_misses() -> None:
    # The example on 2 × L40S, which has no prefill measurement of its own: it is timed
    # from the Hopper class with its band (sizing/data/performance.json families), so
    # the plan is sized under traffic like a measured card: its hit rates count the misses
    # and no warning about recomputed conversations is needed.
    model = from_catalog("Qwen/Qwen3-32B-FP8")
    plan = make_plan(
        plan_request(model=model, without_shared_tier=True, **{**EXAMPLE, "gpu": "l40s"})
    )
    s = plan_summary(plan)
    assert s["ttft_band_pct"] == 56 and s["miss_rate"] is not None
    assert "tier_capped" not in {n.code for n in plan.verdict.warning_notes}


def test_with_a_measured_basis_the_misses_need_no_such_warning(capped: Plan) -> None:
    # On the RTX PRO 6000 the traffic model's hit rates count the misses already.
    assert "tier_capped" not in {n.code for n in capped.verdict.warning_notes}
