"""TPOT against the decode batch: the performance model at batches 1, 2, 4, … and straight
lines between them.

Rule: TPOT is a maximum of terms linear in the batch (weights and KV read, compute,
all-reduces; :mod:`sizing.performance.decode`), bent only where a MoE model's touched
experts grow, so lines between powers of two follow it closely and cost the model at
those batches only. :mod:`sizing.serving.replica_model` builds one per model, GPU, TP and
context; :func:`sizing.serving.load.settle` reads its lines directly in the decode batch's fixed
point, any other caller calls it.
"""

from __future__ import annotations

import math
from collections.abc import Callable


class TpotCurve:
    """``batch → ms`` per decode step: the model's TPOT at the powers of two at and above
    ``batch`` and the line between them (at a power of two, the model's own figure;
    ``inf`` for a batch that is not finite; the batch-1 figure at and below 1).

    Args:
        at: the performance model's TPOT at an integer batch, ms (evaluated once per
            batch, when first needed).
    """

    __slots__ = ("_at", "_lines", "_points")

    def __init__(self, at: Callable[[int], float]) -> None:
        self._at = at
        self._points: dict[int, float] = {}
        self._lines: dict[int, tuple[int, float, float]] = {}

    def point(self, batch: int) -> float:
        """The performance model's TPOT at ``batch`` (an integer ≥ 1), ms."""
        ms = self._points.get(batch)
        if ms is None:
            ms = self._points[batch] = self._at(batch)
        return ms

    def line(self, exponent: int) -> tuple[int, float, float]:
        """The line from the power of two ``low = 2^exponent``: ``(low, TPOT at low, rise
        to 2 low)``, ms."""
        line = self._lines.get(exponent)
        if line is None:
            low = 1 << exponent
            start = self.point(low)
            line = self._lines[exponent] = (low, start, self.point(2 * low) - start)
        return line

    def __call__(self, batch: float) -> float:
        if not math.isfinite(batch):
            return math.inf
        if batch <= 1:
            return self.point(1)
        exponent = int(math.log2(batch))  # the power of two at or below the batch
        if 1 << exponent == batch:
            return self.point(1 << exponent)
        low, start, rise = self.line(exponent)
        return start + (batch - low) / low * rise
