"""Chart data of the plan under traffic: the CPU tier's knee and TTFT p95 against users."""

from __future__ import annotations

import math

import pytest

from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import PlanRequest, make_plan
from sizing.serving.curves import hit_rate_curve, ttft_curve
from sizing.workload import SEED_WORKLOAD


def _seed():  # type: ignore[no-untyped-def]
    return make_plan(PlanRequest(model=from_catalog(SEED_WORKLOAD.model), workload=SEED_WORKLOAD))


def test_hit_rate_rises_to_a_knee() -> None:
    # Seed example: 125 GiB per replica holds every user (docs/sizing.md §4); beyond it more
    # DRAM adds nothing, below it the CPU share falls.
    plan = _seed()
    assert plan.serving is not None
    points = hit_rate_curve(
        plan.serving, [0, 30, 60, 125, 250], kv_bytes_per_token=plan.kv_bytes_per_token
    )
    cpu = [p.cpu for p in points]
    assert cpu[0] == 0.0
    assert cpu == sorted(cpu)
    assert cpu[-1] == pytest.approx(cpu[-2], abs=0.02)  # the knee: 250 GiB buys ~nothing more
    assert cpu[-2] == pytest.approx(plan.serving.hits.cpu, abs=0.02)


def test_ttft_grows_with_users_and_faster_without_a_tier() -> None:
    plan = _seed()
    assert plan.serving is not None
    points = ttft_curve(plan.serving, [100, 500, 1000, 2000], plan_users=500)
    with_tier = [p.ttft_p95_ms for p in points]
    assert with_tier == sorted(with_tier)
    for p in points:
        assert p.ttft_p95_without_tier_ms >= p.ttft_p95_ms or math.isinf(p.ttft_p95_ms)
    with pytest.raises(ValueError, match="users"):
        ttft_curve(plan.serving, [0], plan_users=500)
