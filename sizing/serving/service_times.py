"""Per-request times of one workload on one replica: the service table of every turn and
outcome, and the mixture of those times that hit rates make.

Rules and sources:

- **Requests.** Every turn is one request. Turn 1 prefills its prompt (a shared system
  prompt is cached on the GPU); turn ``k > 1`` either finds the prompt of turn ``k − 1``
  in a tier and prefills only the last answer and the new prompt (TTFT of a hit = reload
  from that tier + prefill of the new part, docs/sizing.md §10), or prefills the whole prompt
  (a miss). The share of each comes from :mod:`sizing.traffic.hit_rate`; the times from the
  performance model, evaluated once per workload into a :class:`ServiceTable`.
- **Mixture.** Under hit rates, an outcome's probability is its turn's share of requests
  times its outcome's share of returns; the service time's moments and 95th percentile
  are taken over the outcomes in time order.
- **Wait and service.** The 95th percentile of a request's wait + service combines the
  prefill queue's wait tail (:mod:`sizing.serving.load`: M/G/1, Kingman's heavy-traffic
  approximation) with the mixture as a convolution: the wait of an FCFS queue does not
  depend on the request's own service.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate

from sizing.traffic.hit_rate import ConversationShape, TierHits

TIERS = ("gpu", "cpu", "nvme", "shared")
"""Where a hit comes from, fastest first (as :class:`~sizing.traffic.hit_rate.TierHits`)."""

MAX_ROWS = 12
"""Turns evaluated per conversation; longer conversations are sampled evenly."""

_KEPT_MOMENTS = 64
"""The moments of this many hit shares a service table keeps before it starts again."""


@dataclass(frozen=True)
class TurnTimes:
    """Time to first token of one turn, ms, per where its history is found.

    Attributes:
        weight: share of requests that are this turn (rows sum to 1).
        miss_ms: prefill of the whole prompt.
        hit_ms: per tier (gpu, cpu, nvme, shared): reload of the history from there +
            prefill of the new part. Turn 1 has no history: every entry is ``miss_ms``.
        reload_tokens: the history a hit reloads, tokens (0 for turn 1).
    """

    weight: float
    miss_ms: float
    hit_ms: tuple[float, float, float, float]
    reload_tokens: int


@dataclass(frozen=True)
class ServiceTable:
    """Per-request times of one workload on one replica (see :func:`service_table`).

    Attributes:
        rows: one per evaluated turn.
        outcomes: every (ms, share of requests of its turn, outcome) sorted by time;
            the outcome indexes ``(gpu, cpu, nvme, shared, miss, first turn)``.
    """

    rows: tuple[TurnTimes, ...]
    outcomes: tuple[tuple[float, float, int], ...] = ()
    _moments: dict[tuple[float, float, float, float], tuple[float, float, float]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _picked: dict[tuple[bool, ...], tuple[tuple[float, float, int], ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @cached_property
    def _columns(self) -> tuple[tuple[float, int], ...]:
        """The distinct (share of requests of its turn, outcome) of :attr:`outcomes`, by
        outcome when every turn has the same share (as :func:`service_table` samples
        them): an outcome's probability is its weight times its outcome's share."""
        weights = {weight for _ms, weight, _outcome in self.outcomes}
        if len(weights) == 1:
            (weight,) = weights
            return tuple((weight, outcome) for outcome in range(6))
        return tuple(dict.fromkeys((weight, outcome) for _ms, weight, outcome in self.outcomes))

    def _outcomes(self, hits: TierHits) -> tuple[list[float], tuple[tuple[float, float, int], ...]]:
        """The probability of each column (:attr:`_columns`) under ``hits``, and (ms, s,
        column) of the outcomes whose probability is not ≤ 0, in time order (the others
        count for nothing), kept per pattern of such columns."""
        columns = self._columns
        if len(columns) == 6:  # by outcome
            weight = columns[0][0]
            probs = [
                weight * hits.gpu,
                weight * hits.cpu,
                weight * hits.nvme,
                weight * hits.shared,
                weight * hits.miss,
                weight * 1.0,
            ]
            pattern: tuple[bool, ...] = (
                not probs[0] <= 0,
                not probs[1] <= 0,
                not probs[2] <= 0,
                not probs[3] <= 0,
                not probs[4] <= 0,
                not probs[5] <= 0,
            )
        else:
            shares = (hits.gpu, hits.cpu, hits.nvme, hits.shared, hits.miss, 1.0)
            probs = [weight * shares[outcome] for weight, outcome in columns]
            pattern = tuple([not p <= 0 for p in probs])
        picked = self._picked.get(pattern)
        if picked is None:
            column = {key: i for i, key in enumerate(columns)}
            picked = self._picked[pattern] = tuple(
                (ms, ms / 1e3, column[weight, outcome])
                for ms, weight, outcome in self.outcomes
                if pattern[column[weight, outcome]]
            )
        return probs, picked

    def moments(self, hits: TierHits) -> tuple[float, float, float]:
        """Mean service time (s), its second moment (s²) and its 95th percentile (ms)
        when returns hit as ``hits`` says.

        The sums run over the outcomes in time order. The moments are kept per hit
        shares (the four tiers', all they depend on: a search asks for those of an
        evaluation again, and the passes of one with a shared tier that adds no hit give
        the same shares)."""
        key = (hits.gpu, hits.cpu, hits.nvme, hits.shared)
        kept = self._moments
        found = kept.get(key)
        if found is not None:
            return found
        probs, picked = self._outcomes(hits)
        mean = second = acc = 0.0
        outcomes = iter(picked)
        for ms, seconds, column in outcomes:  # up to the 95th percentile
            p = probs[column]
            weighted = p * seconds
            mean += weighted
            second += weighted * seconds
            acc += p
            if not acc < 0.95 - 1e-12:
                p95 = ms
                break
        else:  # 95 % not reached: the last outcome (none: 0)
            p95 = picked[-1][0] if picked else 0.0
        for _ms, seconds, column in outcomes:  # the rest
            weighted = probs[column] * seconds
            mean += weighted
            second += weighted * seconds
        if len(kept) >= _KEPT_MOMENTS:
            kept.clear()
        found = kept[key] = (mean, second, p95)
        return found

    def p95_with_wait(
        self,
        hits: TierHits,
        rho: float,
        wait_mean_ms: float,
        service_p95: float,
        wait_p95: float,
        *,
        decides: tuple[float, float] | None = None,
    ) -> float:
        """95th percentile of wait + service, ms: ``P(W + S > t) = Σ pᵢ P(W > t − sᵢ)`` with
        ``P(W > x) = ρ exp(−ρ x / E[W])`` for ``x ≥ 0`` (the wait of an M/G/1 FCFS queue does
        not depend on the request's own service), solved between ``max(S₉₅, W₉₅)`` and
        ``S₉₅ + W₉₅``.

        ``decides = (step_ms, limit_ms)``: only whether the percentile + ``step_ms`` is at
        most ``limit_ms`` is asked. The bisection's answer lies between its bounds at every
        step (each midpoint lies between them), so once ``lo + step_ms`` is above the limit
        or ``hi + step_ms`` at most it, that bound is returned: it compares as the answer
        does (with finite figures, the bounds in order)."""
        if rho <= 0 or wait_mean_ms <= 0:
            return service_p95
        rate = rho / wait_mean_ms
        lo, hi = max(service_p95, wait_p95), service_p95 + wait_p95
        top = hi
        step = limit = 0.0
        early = decides is not None and lo <= hi and math.isfinite(lo + hi + sum(decides))
        if early:
            assert decides is not None
            step, limit = decides
            if lo + step > limit:
                return lo
            if hi + step <= limit:
                return hi
        # The outcomes are sorted by time. With k outcomes shorter than t,
        # P(W + S > t) = Σ_{i≥k} pᵢ + ρ e^{(top − t) rate} Σ_{i<k} pᵢ e^{(sᵢ − top) rate}:
        # the sums once, then each t costs a bisection. Every t tried lies in (lo, top), so
        # the outcomes shorter than lo count in every t's first sum: only the sums from
        # there on are kept. (top − lo) × rate ≤ W₉₅ × rate = ln(ρ / 0.05) ≤ ln 20, so the
        # factor e^{(top − t) rate} stays below 20.
        probs, picked = self._outcomes(hits)
        exp = math.exp
        acc = 0.0
        times: list[float] = []  # the outcomes from lo on
        tail: list[float] = []  # their probabilities
        below: list[float] = []  # Σ_{i<k} pᵢ e^{(sᵢ − top) rate} for k from lo on
        outcomes = iter(picked)
        for ms, _seconds, column in outcomes:  # shorter than lo
            p = probs[column]
            if not ms < lo:
                times.append(ms)
                tail.append(p)
                below.append(acc)
                if ms < top:
                    acc += p * exp((ms - top) * rate)
                break
            acc += p * exp((ms - top) * rate)
        for ms, _seconds, column in outcomes:  # from lo on
            p = probs[column]
            times.append(ms)
            tail.append(p)
            below.append(acc)
            if ms < top:  # the longer ones leave the sum as it is
                acc += p * exp((ms - top) * rate)
        below.append(acc)
        above = list(accumulate(reversed(tail), initial=0.0))  # Σ_{i≥k} pᵢ
        above.reverse()

        where = bisect.bisect_left
        for _ in range(12):
            if hi - lo <= 0.5:  # half a millisecond is as exact as the inputs
                break
            mid = (lo + hi) / 2
            k = where(times, mid)
            if above[k] + rho * exp((top - mid) * rate) * below[k] > 0.05:  # P(W + S > mid)
                lo = mid
                if early and lo + step > limit:
                    return lo
            else:
                hi = mid
                if early and hi + step <= limit:
                    return hi
        return hi

    def gpu_share_for_p95(self, ms: float) -> float | None:
        """The smallest share of returns that must hit the GPU, the rest missing (no
        offload tier), for the 95th percentile of the service time (as :meth:`moments`
        gives it) to be at most ``ms``; ``None`` when no share reaches it.

        The outcomes up to ``ms`` hold ``A + B h`` of the requests at a GPU share ``h``
        (first turns and misses ``A``; each GPU hit adds and each miss takes away its
        turn's weight: ``B``), and the percentile is at most ``ms`` once they hold 95 %.
        """
        fixed = per_hit = 0.0
        for t, weight, outcome in self.outcomes:
            if t > ms:
                break
            if outcome == 0:
                per_hit += weight
            elif outcome == 4:
                fixed += weight
                per_hit -= weight
            elif outcome == 5:
                fixed += weight
        need = 0.95 - 1e-12 - fixed
        if need <= 0:
            return 0.0
        if per_hit <= 0 or need > per_hit:
            return None
        return need / per_hit

    def mixture(self, hits: TierHits) -> list[tuple[float, float]]:
        """(probability, ms) of every outcome of a request under ``hits``."""
        shares = (hits.gpu, hits.cpu, hits.nvme, hits.shared, hits.miss, 1.0)
        return [(w * shares[o], ms) for ms, w, o in self.outcomes if w * shares[o] > 0]


def _turns(turns: int) -> list[tuple[int, float]]:
    """Turn indices to evaluate with their share of requests."""
    if turns <= MAX_ROWS:
        return [(k, 1.0 / turns) for k in range(1, turns + 1)]
    picks = sorted({1 + round(i * (turns - 1) / (MAX_ROWS - 1)) for i in range(MAX_ROWS)})
    return [(k, 1.0 / len(picks)) for k in picks]


def service_table(
    *,
    shape: ConversationShape,
    shared_prefix_tokens: int,
    miss_ms: Callable[[int], float],
    hit_ms: Callable[[str, int, int], float | None],
) -> ServiceTable:
    """Evaluate the performance model once for every turn and outcome.

    Args:
        shape: the conversation's tokens per turn.
        shared_prefix_tokens: a system prompt every conversation starts with (always
            cached on the GPU).
        miss_ms: ``prompt_tokens → ms``, TTFT of one request prefilled whole.
        hit_ms: ``(tier, prompt_tokens, cached_tokens) → ms``, TTFT of one request whose
            first ``cached_tokens`` come from ``tier`` (one of :data:`TIERS`); ``None``
            when the engine has no such tier (then a "hit" there costs a miss).

    Source: :mod:`sizing.performance` (``ttft_miss_ms``, ``ttft_hit_ms``) in the plan.
    """
    prefix = shared_prefix_tokens

    def fresh(prompt: int) -> float:
        """The prompt with only the shared prefix cached (on the GPU)."""
        if prefix == 0:
            return miss_ms(prompt)
        return hit_ms("gpu", prefix + prompt, prefix) or miss_ms(prefix + prompt)

    rows = []
    for k, weight in _turns(shape.turns):
        prompt = shape.prompt_tokens(k)
        miss = fresh(prompt)
        if k == 1:
            rows.append(TurnTimes(weight, miss, (miss,) * 4, 0))
            continue
        history = shape.prompt_tokens(k - 1)
        hits = []
        for tier in TIERS:
            ms = hit_ms(tier, prefix + prompt, prefix + history)
            hits.append(miss if ms is None else ms)
        rows.append(TurnTimes(weight, miss, tuple(hits), history))  # type: ignore[arg-type]
    outcomes = []
    for row in rows:
        if row.reload_tokens == 0:
            outcomes.append((row.miss_ms, row.weight, 5))
            continue
        outcomes.append((row.miss_ms, row.weight, 4))
        outcomes.extend((ms, row.weight, i) for i, ms in enumerate(row.hit_ms))
    return ServiceTable(tuple(rows), tuple(sorted(outcomes)))
