"""How long users take to come back: the distribution of gaps between a conversation's turns.

The gap is the time from one turn's request to the next turn's request of the same
conversation (the reuse gap of its KV cache). A log-normal distribution is fitted to a
median and a 90th percentile:

    μ = ln(median),  σ = ln(p90 / median) / z₀.₉,  z₀.₉ = 1.2816

Why log-normal: the reuse gaps of the Mooncake conversation trace (Kimi production
traffic, one hour; ``offload_benefit_points.jsonl`` id ``benefit-lru-sim-mooncake-traces``)
are p50 123 s, p90 483 s and p99 1,473 s; the log-normal through p50 and p90 puts p99
at 1,472 s. The synthetic trace (p50 63.5 s, p90 293 s) has a lighter tail than the
fit (p99 608 s measured, 1,019 s fitted), so the fit errs towards longer gaps, fewer
hits and a larger tier.

Named profiles (:data:`PROFILES`):

- ``chat``: the Mooncake conversation trace (p50 123 s, p90 483 s).
- ``document_qa``: the Mooncake synthetic trace, built from LooGLE and LEval long-document
  question answering and ShareGPT (Mooncake FAST'25 paper §5.2.1, github:kvcache-ai/Mooncake
  ``FAST25-release/README.md``): p50 63.5 s, p90 293 s.
- ``agent``: an agent sends its next step when a tool call returns. No published trace
  gives these gaps (the Mooncake tool&agent trace is not in the public release's
  files), so the profile is a planning assumption, stated as such: p50 10 s, p90 60 s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

Z_P90 = 1.2815515655446004
"""The standard normal's 90th percentile."""

MAX_GAP_S = 7 * 24 * 3600.0
"""Longest median or p90 gap accepted, s (one week)."""


def _phi(x: float) -> float:
    """Standard normal CDF."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


@dataclass(frozen=True)
class GapDistribution:
    """Log-normal gaps between turns, fitted to a median and a p90.

    Attributes:
        median_s: median gap, s (> 0).
        p90_s: 90th percentile gap, s (> ``median_s``).
        name: the profile name, or ``custom``.
        source: where the figures come from.

    Raises:
        ValueError: if the gaps are not positive, not finite, longer than a week, or
            the p90 is not above the median.
    """

    median_s: float
    p90_s: float
    name: str = "custom"
    source: str = "customer's figures"

    def __post_init__(self) -> None:
        for label, value in (("median_s", self.median_s), ("p90_s", self.p90_s)):
            if not (isinstance(value, int | float) and math.isfinite(value)):
                raise ValueError(f"{label} must be a number of seconds, got {value!r}")
            if not 0 < value <= MAX_GAP_S:
                raise ValueError(f"{label} must be above 0 and at most {MAX_GAP_S:,.0f} s")
        if self.p90_s <= self.median_s:
            raise ValueError(
                f"the p90 gap ({self.p90_s:g} s) must be longer than the median "
                f"({self.median_s:g} s)"
            )

    @cached_property
    def mu(self) -> float:
        """Log-normal μ (of ln seconds)."""
        return math.log(self.median_s)

    @cached_property
    def sigma(self) -> float:
        """Log-normal σ."""
        return math.log(self.p90_s / self.median_s) / Z_P90

    @cached_property
    def mean_s(self) -> float:
        """Mean gap, s: ``exp(μ + σ²/2)``."""
        return math.exp(self.mu + self.sigma**2 / 2)

    def cdf(self, seconds: float) -> float:
        """P(gap < ``seconds``); 0 for ``seconds`` ≤ 0."""
        if seconds <= 0:
            return 0.0
        if math.isinf(seconds):
            return 1.0
        return _phi((math.log(seconds) - self.mu) / self.sigma)

    def quantile(self, q: float) -> float:
        """The gap below which a share ``q`` (0 < q < 1) of returns fall, s.

        Raises:
            ValueError: if ``q`` is not strictly between 0 and 1.
        """
        if not 0 < q < 1:
            raise ValueError(f"q must be between 0 and 1, got {q}")
        lo, hi = -12.0, 12.0
        for _ in range(80):
            mid = (lo + hi) / 2
            if _phi(mid) < q:
                lo = mid
            else:
                hi = mid
        return math.exp(self.mu + self.sigma * (lo + hi) / 2)

    def mean_truncated_s(self, seconds: float) -> float:
        """``E[min(gap, seconds)]`` = ∫₀^seconds P(gap > u) du, s.

        Closed form for the log-normal:
        ``e^{μ+σ²/2} Φ((ln t − μ − σ²)/σ) + t (1 − Φ((ln t − μ)/σ))``.
        """
        if seconds <= 0:
            return 0.0
        if math.isinf(seconds):
            return self.mean_s
        z = (math.log(seconds) - self.mu) / self.sigma
        return self.mean_s * _phi(z - self.sigma) + seconds * (1.0 - _phi(z))


PROFILES: dict[str, GapDistribution] = {
    "chat": GapDistribution(
        123.0,
        483.0,
        name="chat",
        source="Mooncake conversation trace reuse gaps (benefit-lru-sim-mooncake-traces)",
    ),
    "document_qa": GapDistribution(
        63.5,
        293.0,
        name="document_qa",
        source="Mooncake synthetic trace (LooGLE, LEval, ShareGPT) reuse gaps "
        "(benefit-lru-sim-mooncake-traces)",
    ),
    "agent": GapDistribution(
        10.0,
        60.0,
        name="agent",
        source="planning assumption: an agent's next step follows its tool call",
    ),
}
"""Named gap profiles; see the module docstring for their sources."""

DEFAULT_PROFILE = "chat"
"""The profile a customer who says nothing gets: production chat traffic."""


def profile(name: str) -> GapDistribution:
    """The named gap profile.

    Raises:
        ValueError: naming the known profiles when ``name`` is not one of them.
    """
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(
            f"gap profile must be one of {', '.join(PROFILES)}, got {name!r}"
        ) from None
