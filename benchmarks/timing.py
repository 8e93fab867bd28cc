"""CPU-time sampling for in-process figures.

The benchmark machine is shared (two cores, other test runs beside ours): wall-clock
samples of a millisecond-long call measure the scheduler as much as the code. In-process
figures therefore sample the process's CPU time (``time.process_time_ns``, the kernel's
per-process CPU clock), which a waiting process does not advance.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Samples:
    """CPU milliseconds of each measured call, sorted ascending."""

    ms: tuple[float, ...]

    @property
    def median(self) -> float:
        """The median call, ms."""
        return statistics.median(self.ms)

    @property
    def p95(self) -> float:
        """The 95th percentile call (nearest rank), ms."""
        return self.ms[max(0, int(len(self.ms) * 0.95 + 0.5) - 1)]

    def text(self, digits: int = 3) -> str:
        """``median / p95`` with their unit, for a result row."""
        return f"{self.median:.{digits}f} ms / {self.p95:.{digits}f} ms"


def cpu_samples(call: Callable[[], object], runs: int, *, warmup: int = 1) -> Samples:
    """CPU time of ``runs`` calls of ``call`` after ``warmup`` unmeasured calls."""
    for _ in range(warmup):
        call()
    out = []
    for _ in range(runs):
        start = time.process_time_ns()
        call()
        out.append((time.process_time_ns() - start) / 1e6)
    return Samples(tuple(sorted(out)))
