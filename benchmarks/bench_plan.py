"""How long one sizing plan takes (target: under 5 ms)."""

from __future__ import annotations

import statistics
import time

from benchmarks.run import Result
from sizing.model import from_catalog
from sizing.plan import PlanRequest, make_plan


def run() -> list[Result]:
    model = from_catalog("Qwen/Qwen3-32B-FP8")
    request = PlanRequest(
        model=model, context_tokens=8192, users=500, new_conversations_per_day=2000
    )
    make_plan(request)
    samples = []
    for _ in range(500):
        start = time.perf_counter()
        make_plan(request)
        samples.append((time.perf_counter() - start) * 1e3)
    median = statistics.median(samples)
    p95 = sorted(samples)[int(len(samples) * 0.95)]
    return [
        Result(
            "sizing",
            "one plan, seed example (median / p95)",
            f"{median:.3f} ms / {p95:.3f} ms",
            "< 5 ms",
            p95 < 5,
        )
    ]
