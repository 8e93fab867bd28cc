"""The sizing article's worked example, figure by figure.

Source of every expected value: the seed article (shared seed 000, "Qwen3-32B in FP8,
one copy per card on a server with four RTX PRO 6000 Server Edition, 500 users, 8K
conversations"), as restated in docs/sizing.md
"""

from __future__ import annotations

import pytest

from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import Plan, make_plan
from sizing.summary import plan_summary
from tests.factories import plan_request

SEED_MODEL = "Qwen/Qwen3-32B-FP8"


def seed_plan(users: int = 500, kv_dtype: str = "fp8") -> Plan:
    return make_plan(
        plan_request(
            model=from_catalog(SEED_MODEL),
            context_tokens=8192,
            users=users,
            gpu="rtx-pro-6000-se",
            gpus_per_node=4,
            kv_dtype=kv_dtype,
            new_conversations_per_day=2000,
        )
    )


def test_kv_per_token_and_per_conversation() -> None:
    plan = seed_plan()
    # 2 × 64 layers × 8 KV heads × 128 head_dim × 1 byte = 131,072 B; × 8,192 = 1 GiB.
    assert plan.kv_bytes_per_token == 131_072
    assert plan.conversation_bytes == 2**30


def test_gpu_budget_and_residency() -> None:
    s = plan_summary(seed_plan())
    # 0.9 × 95.6 GiB − 3 GiB − 32.0 GiB = 51 GiB per card, 51 conversations, 204 on four.
    assert s["weights_gib"] == pytest.approx(32.0, abs=0.15)
    assert s["kv_cache_gib_per_gpu"] == pytest.approx(51.0, abs=0.5)
    assert s["conversations_per_gpu"] == 51
    assert s["conversations_on_gpus"] == 204
    assert s["resting_conversations"] == 296
    assert (s["tensor_parallel_size"], s["replicas"]) == (1, 4)


def test_cpu_tier_and_dimms() -> None:
    s = plan_summary(seed_plan())
    # 500 × 1 GiB = 500 GiB ≈ 537 GB; 125 GiB per instance; 24 × 48 GB = 1,152 GB leaving
    # about 615 GB beside the buffer (24 × 32 GB = 768 GB would leave only about 230 GB).
    assert s["cpu_tier_total_gib"] == 500.0
    assert s["cpu_tier_total_gb"] == pytest.approx(537.0, abs=1.0)
    assert s["cpu_tier_per_instance_gib"] == 125.0
    assert (s["dimm_count"], s["dimm_gb"], s["host_memory_gb"]) == (24, 48, 1152)
    assert s["host_memory_free_after_buffer_gb"] == pytest.approx(615.0, abs=5.0)


def test_vllm_flags_and_nvme_writes() -> None:
    s = plan_summary(seed_plan())
    # --kv-offloading-size 125 and cpu_bytes_to_use 134217728000; 2,000 new 1 GiB
    # conversations a day write about 2.1 TB.
    assert s["vllm_kv_offloading_size_gib"] == 125
    assert s["vllm_cpu_bytes_to_use"] == 134_217_728_000
    assert s["nvme_writes_tb_per_day"] == pytest.approx(2.1, abs=0.05)
    assert s["offload_pays"] is True


def test_sixteen_bit_cache_doubles_everything() -> None:
    s = plan_summary(seed_plan(kv_dtype="auto"))
    # "2 GiB per conversation and 1,000 GiB for 500 users, which needs 24 DIMMs of 64 GB".
    assert s["kv_bytes_per_token"] == 262_144
    assert s["conversation_gib"] == 2.0
    assert s["conversations_per_gpu"] == 25
    assert s["cpu_tier_total_gib"] == 1000.0
    assert (s["dimm_count"], s["dimm_gb"], s["host_memory_gb"]) == (24, 64, 1536)


def test_no_tier_when_everything_fits() -> None:
    s = plan_summary(seed_plan(users=150))
    # 150 ≤ 204 resident: no CPU tier is sold; host memory stays at the 2 × 384 GB baseline.
    assert s["resting_conversations"] == 0
    assert s["offload_pays"] is False
    assert s["cpu_tier_total_gib"] == 0
    assert s["host_memory_gb"] == 768
    assert s["vllm_kv_offloading_size_gib"] is None
    assert "fit in GPU memory" in s["verdict_reasons"][0]
