"""Builders of sizing inputs for the tests, all from the seed example (``SEED_WORKLOAD``).

Django-free: the engine tests use them as well as the web tests.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sizing.memory.gpu_budget import BudgetRule
from sizing.model.spec import ModelSpec
from sizing.plan.orchestrator import PlanRequest
from sizing.traffic.profile import Traffic
from sizing.workload import SEED_WORKLOAD, Workload


def seed_workload(**changes: Any) -> Workload:
    """The sizing article's worked example (docs/sizing.md) with ``changes``."""
    return SEED_WORKLOAD.replace(**changes)


def plan_request(
    *,
    model: ModelSpec,
    platform_slug: str | None = None,
    rule: BudgetRule | None = None,
    traffic: Traffic | None = None,
    **fields: Any,
) -> PlanRequest:
    """A request for ``model`` with the given :class:`Workload` fields (the type's own
    defaults for the others, not the seed's), naming the model by its repo id."""
    extra: dict[str, Any] = {}
    if platform_slug is not None:
        extra["platform_slug"] = platform_slug
    if rule is not None:
        extra["rule"] = rule
    if traffic is not None:  # the traffic inputs are workload fields of the same names
        fields = {**dataclasses.asdict(traffic), **fields}
    return PlanRequest(model=model, workload=Workload(model=model.repo_id, **fields), **extra)
