"""When no configuration meets the targets (:mod:`sizing.search.cheapest`): which target binds,
and the configuration that comes nearest to it.

- **Binding.** The target most of the sized configurations miss; else the hard limit
  most of them break. A GPU no chassis takes and a GPU without a measured basis for the
  TTFT are left out: the workload does not bind them, the catalog does.
- **Nearest.** Among the sized configurations that miss the binding target, the one that
  misses it by the smallest share (then the cheaper). When every configuration is
  refused because the TTFT p95 or TPOT target lies below what one request takes without
  any load (:func:`sizing.serving.serve.serve`), the nearest is the one whose unloaded time is
  lowest, sized for :data:`sizing.serving.targets.RELAXED_TARGET_FACTOR` × that time (the margin
  the plan gives a default target it cannot meet) and reported with the customer's
  target as a miss.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from sizing.hardware.chassis import COOLING_BINDING
from sizing.plan.orchestrator import PlanRequest
from sizing.search.configuration import Configuration, Miss, P, PriceFn, Rejection
from sizing.serving.targets import RELAXED_TARGET_FACTOR

TTFT_TARGET = "TTFT p95"
TPOT_TARGET = "TPOT"
NO_BASIS = "no measured basis for the TTFT"
"""Names of the targets a plan under traffic can miss, and of the configurations whose
GPU the performance model has no measurement for (never recommended: their TTFT would
be a guess, ``sizing.performance``)."""

TARGET_FIELDS = {TTFT_TARGET: "ttft_p95_ms", TPOT_TARGET: "tpot_ms"}
"""The :class:`~sizing.workload.Workload` field of each target."""


def binding(rejected: Sequence[Rejection], feasible: Sequence[Configuration[Any]]) -> str:
    """The target missed by most sized configurations, else the most common hard limit
    (module docstring)."""
    misses = Counter(m.target for c in feasible for m in c.misses)
    if misses:
        return misses.most_common(1)[0][0]
    left_out = (COOLING_BINDING, NO_BASIS)
    counts = Counter(r.binding for r in rejected if r.binding not in left_out)
    if counts:
        return counts.most_common(1)[0][0]
    if any(r.binding == NO_BASIS for r in rejected):
        return NO_BASIS
    return "no GPU type on the price list"


def nearest(
    bound: str,
    feasible: Sequence[Configuration[P]],
    rejected: Sequence[Rejection],
    size: Callable[[PlanRequest], Configuration[P] | Rejection | None],
) -> Configuration[P] | None:
    """The configuration nearest to meeting ``bound`` (module docstring), or ``None``.

    Args:
        bound: the binding target or limit (:func:`binding`).
        feasible: the configurations sized.
        rejected: the configurations refused, with the requests tried.
        size: sizes and prices one request (:func:`sizing.search.cheapest.evaluate`).
    """
    near = [c for c in feasible if any(m.target == bound for m in c.misses)]
    if near:
        return min(near, key=lambda c: (min(m.shortfall for m in c.misses), c.price))
    name = TARGET_FIELDS.get(bound)
    below = [r for r in rejected if r.binding == bound and r.floor_ms and r.request]
    if name is None or not below:
        return None
    closest = min(below, key=lambda r: float(r.floor_ms or 0.0))
    assert closest.request is not None and closest.floor_ms is not None
    limit = float(getattr(closest.request.workload, name))
    relaxed = math.ceil(closest.floor_ms * RELAXED_TARGET_FACTOR)
    request = replace(closest.request, workload=closest.request.workload.replace(**{name: relaxed}))
    outcome = size(request)
    if not isinstance(outcome, Configuration):
        return None
    value = outcome.ttft_p95_ms if bound == TTFT_TARGET else outcome.tpot_ms
    if value is None:
        return None
    miss = Miss(bound, value, limit, (value - limit) / limit)
    return replace(outcome, misses=(miss, *outcome.misses))


__all__ = ["NO_BASIS", "TPOT_TARGET", "TTFT_TARGET", "PriceFn", "binding", "nearest"]
