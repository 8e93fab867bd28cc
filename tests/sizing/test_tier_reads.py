"""Hits from the NVMe and shared tiers timed from their read rate (sizing/serving/tier_reads.py):
the arithmetic, and that such hits now lower TTFT instead of counting as misses."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import make_plan
from sizing.serving.tier_reads import SHARED_LINK_GBS_PER_NODE, read_rates, staged_hit_ms
from sizing.summary import plan_summary
from tests.factories import plan_request

QWEN = from_catalog("Qwen/Qwen3-32B-FP8")


def test_read_rates_share_the_node_among_its_instances() -> None:
    # Seed node: one Micron 9550 MAX 6.4 TB (14.0 GB/s sequential read, hardware.json)
    # and one 100 GbE port (12.5 GB/s) shared by 4 instances.
    rates = read_rates(nvme_read_gbs_per_node=14.0, instances_per_node=4)
    assert rates.nvme_gbs == pytest.approx(3.5)
    assert rates.shared_gbs == pytest.approx(SHARED_LINK_GBS_PER_NODE / 4) == 3.125
    with pytest.raises(ValueError):
        read_rates(nvme_read_gbs_per_node=-1.0, instances_per_node=4)
    with pytest.raises(ValueError):
        read_rates(nvme_read_gbs_per_node=14.0, instances_per_node=0)


def test_staged_hit_adds_the_tier_read_to_the_cpu_hit() -> None:
    # 8,000 tokens × 131,072 B = 1.048576 GB at 3.5 GB/s = 299.6 ms on top of the CPU hit.
    ms = staged_hit_ms(
        cpu_hit_ms=89.0, cached_tokens=8000, kv_bytes_per_token=131_072, read_gbs=3.5
    )
    assert ms == pytest.approx(89.0 + 1_048_576_000 / 3.5e9 * 1e3)
    # No read rate: no such tier, the caller counts the hit as a miss.
    assert (
        staged_hit_ms(cpu_hit_ms=89.0, cached_tokens=8000, kv_bytes_per_token=1, read_gbs=0) is None
    )
    with pytest.raises(ValueError):
        staged_hit_ms(cpu_hit_ms=1.0, cached_tokens=-1, kv_bytes_per_token=1, read_gbs=1)


def test_seed_plan_times_nvme_and_shared_hits_from_their_read_rate() -> None:
    # Seed example (docs/sizing.md): 500 users, 2,000 new conversations a day on NVMe; one
    # token of Qwen3-32B's FP8 KV is 64 layers × 8 KV heads × 128 × 2 × 1 B = 131,072 B.
    plan = make_plan(
        plan_request(model=QWEN, context_tokens=8192, users=500, new_conversations_per_day=2000)
    )
    serving = plan.serving
    assert serving is not None and serving.evaluator is not None
    assert serving.unmeasured_tiers == ("nvme", "shared")
    table = serving.evaluator.table
    for row in table.rows[1:]:
        gpu, cpu, nvme, shared = row.hit_ms
        assert gpu <= cpu < nvme < shared < row.miss_ms  # equal: the hit correction clamps
        gb = row.reload_tokens * 131_072 / 1e9
        assert nvme - cpu == pytest.approx(gb / 3.5 * 1e3, rel=1e-6)  # 14 GB/s ÷ 4
        assert shared - cpu == pytest.approx(gb / 3.125 * 1e3, rel=1e-6)  # 12.5 GB/s ÷ 4
    # A hit on NVMe costs less prefill time than the miss it counted as before.
    hits = serving.hits
    as_miss = replace(hits, nvme=0.0)
    assert hits.nvme > 0
    assert table.moments(hits)[0] < table.moments(as_miss)[0]
    # The seed's tier is unchanged (500 GiB, seed).
    assert plan_summary(plan)["cpu_tier_total_gib"] == 500.0
