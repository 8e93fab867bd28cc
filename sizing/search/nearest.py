"""When no configuration meets the targets (:mod:`sizing.search.cheapest`): which target binds,
and the configuration that comes nearest to it.

- **Binding.** The target most of the sized configurations miss; else the hard limit
  most of them break. A GPU no chassis takes and a GPU without a measured basis for the
  TTFT are left out: the workload does not bind them, the catalog does.
- **Nearest.** Among the sized configurations that miss the binding target, the one that
  misses it by the smallest share (then the cheaper).
- **One relaxed target for all.** When no configuration meets a latency target because
  it lies closer to what one request takes without any load than
  :data:`sizing.serving.targets.RELAXED_TARGET_FACTOR` × that time (each such plan is
  sized for its own multiple, :func:`sizing.serving.targets.targets`), the search is run
  again for one target shared by every configuration: the lowest of those multiples
  (:func:`relaxed_targets`), so that configurations are compared against the same goal.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sizing.hardware.chassis import COOLING_BINDING
from sizing.search.configuration import Configuration, P, PriceFn, Rejection

TTFT_TARGET = "TTFT p95"
TPOT_TARGET = "TPOT"
NO_BASIS = "no measured basis for the TTFT"
"""Names of the targets a plan under traffic can miss, and of the configurations whose
GPU the performance model has no measurement for (never recommended: their TTFT would
be a guess, ``sizing.performance``)."""


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


def nearest(bound: str, feasible: Sequence[Configuration[P]]) -> Configuration[P] | None:
    """The configuration nearest to meeting ``bound`` (module docstring), or ``None``.

    Args:
        bound: the binding target or limit (:func:`binding`).
        feasible: the configurations sized.
    """
    near = [c for c in feasible if any(m.target == bound for m in c.misses)]
    if not near:
        return None
    return min(near, key=lambda c: (min(m.shortfall for m in c.misses), c.price))


@dataclass(frozen=True)
class RelaxedTargets:
    """The latency targets every configuration of a search is sized for when none meets
    the customer's (module docstring); ``None`` for a target kept as the customer's.

    Attributes:
        ttft_p95_ms: the TTFT p95 target used for all, whole ms.
        tpot_ms: the TPOT target used for all, ms (whole ms from 10 ms).
    """

    ttft_p95_ms: float | None
    tpot_ms: float | None

    def workload_fields(self) -> dict[str, float]:
        """The :class:`~sizing.workload.Workload` fields these targets replace."""
        out = {}
        if self.ttft_p95_ms is not None:
            out["ttft_p95_ms"] = self.ttft_p95_ms
        if self.tpot_ms is not None:
            out["tpot_ms"] = self.tpot_ms
        return out


def relaxed_targets(
    feasible: Sequence[Configuration[Any]], *, ttft_p95_ms: float, tpot_ms: float
) -> RelaxedTargets | None:
    """One target per latency target that no configuration meets for want of time
    without load: the lowest target any of them was sized for (module docstring).

    Args:
        feasible: the configurations sized, none of which meets every target.
        ttft_p95_ms, tpot_ms: the customer's targets, ms.

    Returns:
        The targets to search again for, or ``None`` when no configuration was sized
        for a relaxed target (what binds is then the load, the node limit or the users
        active at once, not a target below one request's time).
    """
    servings = [c.serving for c in feasible if c.serving is not None]
    if not servings:
        return None
    ttft = min(s.ttft_p95_sized_ms for s in servings)
    tpot = min(s.tpot_sized_ms for s in servings)
    relaxed = RelaxedTargets(
        ttft_p95_ms=float(math.ceil(ttft)) if ttft > ttft_p95_ms else None,
        tpot_ms=(float(math.ceil(tpot)) if tpot >= 10 else float(f"{tpot:.2g}"))
        if tpot > tpot_ms
        else None,
    )
    if relaxed.ttft_p95_ms is None and relaxed.tpot_ms is None:
        return None
    return relaxed


__all__ = [
    "NO_BASIS",
    "TPOT_TARGET",
    "TTFT_TARGET",
    "PriceFn",
    "RelaxedTargets",
    "binding",
    "nearest",
    "relaxed_targets",
]
