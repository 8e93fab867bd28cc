"""How long building the whole deployment bundle (all engines, ZIP) takes (target: < 200 ms)."""

from __future__ import annotations

import statistics
import time

from benchmarks.run import Result
from configurator.deployments.services import bundle_build
from sizing.engines.shared_tier import TierOptions
from sizing.model import from_catalog
from sizing.plan import PlanRequest, make_plan


def run() -> list[Result]:
    plan = make_plan(
        PlanRequest(
            model=from_catalog("Qwen/Qwen3-32B-FP8"),
            context_tokens=8192,
            users=500,
            new_conversations_per_day=2000,
        )
    )
    tiers = TierOptions(shared="nfs")
    bundle_build(plan=plan, tiers=tiers)
    samples = []
    for _ in range(50):
        start = time.perf_counter()
        bundle_build(plan=plan, tiers=tiers)
        samples.append((time.perf_counter() - start) * 1e3)
    median = statistics.median(samples)
    p95 = sorted(samples)[int(len(samples) * 0.95)]
    return [
        Result(
            "bundle",
            "all-engine ZIP, seed example with NFS tier (median / p95)",
            f"{median:.1f} ms / {p95:.1f} ms",
            "< 200 ms",
            p95 < 200,
        )
    ]
