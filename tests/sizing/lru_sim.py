"""A small discrete-event simulation of conversations against LRU tiers.

Conversations start as a Poisson process; each has ``turns`` turns separated by gaps
drawn from the log-normal of :class:`sizing.traffic.return_gaps.GapDistribution`. Every tier is
an LRU cache of whole conversations sized in tokens, holding the prompt of the last
turn; every turn touches every tier (inclusive tiers). It counts, for the returns in
the measured interval, the fastest tier that still held the conversation.
"""

from __future__ import annotations

import random
from collections import OrderedDict

from sizing.traffic.hit_rate import ReferenceStream


class _Lru:
    def __init__(self, capacity: float) -> None:
        self.capacity = capacity
        self.items: OrderedDict[int, int] = OrderedDict()
        self.used = 0

    def __contains__(self, key: int) -> bool:
        return key in self.items

    def touch(self, key: int, tokens: int) -> None:
        self.used += tokens - self.items.pop(key, 0)
        self.items[key] = tokens
        while self.used > self.capacity and self.items:
            _, size = self.items.popitem(last=False)
            self.used -= size


def simulate(
    stream: ReferenceStream,
    capacities: list[float],
    *,
    horizon_s: float,
    warmup_s: float,
    seed: int = 1,
) -> list[float]:
    """Share of measured returns whose fastest holding tier is each of ``capacities``
    (in order), then the share that missed everywhere."""
    rng = random.Random(seed)
    gaps = stream.gaps
    shape = stream.shape
    events: list[tuple[float, int, int]] = []
    t, conv = 0.0, 0
    while True:
        t += rng.expovariate(stream.conversations_per_s)
        if t > horizon_s:
            break
        at = t
        for turn in range(1, shape.turns + 1):
            if turn > 1:
                at += rng.lognormvariate(gaps.mu, gaps.sigma)
            if at <= horizon_s:
                events.append((at, conv, turn))
        conv += 1
    events.sort()
    tiers = [_Lru(c) for c in capacities]
    counts = [0] * (len(tiers) + 1)
    for at, key, turn in events:
        if turn > 1 and at >= warmup_s:
            level = next((i for i, tier in enumerate(tiers) if key in tier), len(tiers))
            counts[level] += 1
        for tier in tiers:
            tier.touch(key, shape.prompt_tokens(turn))
    total = sum(counts)
    return [c / total for c in counts]
