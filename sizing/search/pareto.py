"""The Pareto front of the recommended configurations: price against a second axis.

A configuration is on the front when no other one is at most as expensive and at least as
good on the second axis, one of them strictly (the usual definition of Pareto
efficiency). The second axis is the plan's TTFT p95 when every configuration has one,
else its CPU-tier hit rate, else the conversations resident on its GPUs (more resident
conversations, fewer reloads).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sizing.search.configuration import Configuration, P


def pareto_axis(configs: Sequence[Configuration[Any]]) -> str:
    """The second axis of the front: ``ttft_p95_ms`` (lower wins) when every configuration
    has it, else ``cpu_hit_rate`` (higher wins), else ``resident_conversations`` (higher
    wins: fewer returning users need a reload)."""
    if configs and all(c.ttft_p95_ms is not None for c in configs):
        return "ttft_p95_ms"
    if configs and all(c.cpu_hit_rate is not None for c in configs):
        return "cpu_hit_rate"
    return "resident_conversations"


def _goodness(config: Configuration[Any], axis: str) -> float:
    """The second axis as "lower is better"."""
    if axis == "ttft_p95_ms":
        return float(config.ttft_p95_ms or 0.0)
    if axis == "cpu_hit_rate":
        return -float(config.cpu_hit_rate or 0.0)
    return -float(config.resident_conversations)


def pareto_front(configs: Sequence[Configuration[P]]) -> tuple[Configuration[P], ...]:
    """The configurations no other one beats on both price and :func:`pareto_axis`.

    Sorted by price; a configuration is kept when it is strictly better on the second
    axis than every cheaper one (ties in price: the better axis value first).
    """
    axis = pareto_axis(configs)
    ordered = sorted(configs, key=lambda c: (c.price, _goodness(c, axis), c.gpus))
    front: list[Configuration[P]] = []
    best = float("inf")
    for config in ordered:
        value = _goodness(config, axis)
        if value < best:
            front.append(config)
            best = value
    return tuple(front)
