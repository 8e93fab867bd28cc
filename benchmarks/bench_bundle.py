"""How long building the whole deployment bundle (all engines, ZIP) takes (target: < 200 ms)."""

from __future__ import annotations

from benchmarks.run import Result
from benchmarks.timing import cpu_samples
from configurator.deployments.services import bundle_build
from sizing.engines.shared_tier import TierOptions
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import PlanRequest, make_plan
from sizing.workload import SEED_WORKLOAD


def run() -> list[Result]:
    plan = make_plan(PlanRequest(model=from_catalog(SEED_WORKLOAD.model), workload=SEED_WORKLOAD))
    tiers = TierOptions(shared="nfs")
    samples = cpu_samples(lambda: bundle_build(plan=plan, tiers=tiers), 50)
    return [
        Result(
            "bundle",
            "all-engine ZIP, seed example with NFS tier, CPU (median / p95)",
            samples.text(1),
            "< 200 ms",
            samples.p95 < 200,
        )
    ]
