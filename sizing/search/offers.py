"""The offers of the search (:mod:`sizing.search.cheapest`): what a buyer receives, one
configuration per set of parts, and the order they are ranked in.

Variants of the space that buy the same parts (a larger TP size on the same GPUs, a
shared tier that costs nothing extra, an NVMe tier the plan does not sell) are one
offer: the better-serving one is kept (lower TTFT p95, then TPOT, then less to build).
The ranking is by price, then fewer GPUs, then more conversations resident on the GPUs.
"""

from __future__ import annotations

import bisect
from typing import Any, Generic

from sizing.search.configuration import Configuration, P


def sells_asked_nvme(config: Configuration[Any]) -> bool:
    """False for a plan asked for an NVMe tier that sells none: it is its twin without
    one (the NVMe-off configuration), counted once."""
    work = config.plan.request.workload
    return config.plan.nvme.drive is not None or not work.nvme_conversations_per_day


def rank(config: Configuration[P]) -> tuple[P, int, int]:
    """The order of offers: cheaper first, then fewer GPUs, then more conversations
    resident on the GPUs."""
    return (config.price, config.gpus, -config.resident_conversations)


def parts(config: Configuration[Any]) -> tuple[int, tuple[tuple[str, int], ...]]:
    """What a buyer receives: the nodes and every SKU with its quantity."""
    bom = config.bom
    return bom.nodes, tuple(sorted((line.sku, line.quantity) for line in bom.lines))


def better_twin(config: Configuration[Any]) -> tuple[float, float, float]:
    """Among configurations with the same parts: the lower TTFT p95 and TPOT first, then
    the one with less to build (no shared tier)."""
    return (
        round(config.ttft_p95_ms or 0.0, 1),
        round(config.tpot_ms or 0.0, 1),
        config.shared_tier_tb,
    )


class Distinct(Generic[P]):
    """The configurations sized, one per set of parts (:func:`parts`): variants that buy
    the same parts (a TP size or a shared tier that costs nothing extra) are one offer,
    the better-serving one (:func:`better_twin`); the ones meeting the targets are kept
    in rank order."""

    def __init__(self) -> None:
        self.by_parts: dict[Any, Configuration[P]] = {}
        self.meeting: list[Configuration[P]] = []

    def add(self, config: Configuration[P]) -> None:
        """Keep ``config`` unless an offer of the same parts serves at least as well."""
        key = parts(config)
        old = self.by_parts.get(key)
        if old is not None:
            if not better_twin(config) < better_twin(old):
                return
            if old.meets_targets:
                self.meeting.remove(old)
        self.by_parts[key] = config
        if config.meets_targets:
            bisect.insort(self.meeting, config, key=rank)
