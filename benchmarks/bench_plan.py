"""How much CPU one sizing plan takes (target: under 5 ms)."""

from __future__ import annotations

from benchmarks.run import Result
from benchmarks.timing import cpu_samples
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import PlanRequest, make_plan
from sizing.workload import SEED_WORKLOAD


def run() -> list[Result]:
    model = from_catalog("Qwen/Qwen3-32B-FP8")
    request = PlanRequest(model=model, workload=SEED_WORKLOAD)
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
