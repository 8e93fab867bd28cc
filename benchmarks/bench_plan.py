"""How much CPU one sizing plan takes (target: under 5 ms)."""

from __future__ import annotations

from benchmarks.run import Result
from benchmarks.timing import cpu_samples
from sizing.model import from_catalog
from sizing.plan import PlanRequest, make_plan


def run() -> list[Result]:
    model = from_catalog("Qwen/Qwen3-32B-FP8")
    request = PlanRequest(
        model=model, context_tokens=8192, users=500, new_conversations_per_day=2000
    )
    samples = cpu_samples(lambda: make_plan(request), 500)
    return [
        Result(
            "sizing",
            "one plan, seed example, CPU (median / p95)",
            samples.text(),
            "< 5 ms",
            samples.p95 < 5,
        )
    ]
