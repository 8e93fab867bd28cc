"""How much CPU a plan under traffic takes: 50,000 users of the seed model on many nodes
with a router and a shared tier (target: 20 ms)."""

from __future__ import annotations

from benchmarks.run import Result
from benchmarks.timing import cpu_samples
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import PlanRequest, make_plan
from sizing.workload import SEED_WORKLOAD


def run() -> list[Result]:
    model = from_catalog("Qwen/Qwen3-32B-FP8")
    request = PlanRequest(model=model, workload=SEED_WORKLOAD.replace(users=50_000))
    plan = make_plan(request)
    assert plan.parallelism.nodes > 1 and plan.serving is not None
    assert plan.serving.shared is not None and plan.serving.router is not None
    samples = cpu_samples(lambda: make_plan(request), 200)
    return [
        Result(
            "traffic",
            "50,000 users of the seed model: all nodes, router and shared tier, CPU (median / p95)",
            f"{samples.text()} ({plan.parallelism.nodes} nodes)",
            "<= 20 ms",
            samples.p95 <= 20,
        )
    ]
