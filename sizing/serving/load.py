"""One replica under load: TTFT p95 and TPOT with queueing, at the busy hour's request rate.

Rules and sources:

- **Requests.** Every turn is one request; its service time is a prefill or a reload and
  a prefill, by where its history is found (:mod:`sizing.serving.service_times`).
- **Prefill queue.** A replica prefills one request after another (vLLM schedules
  prefill tokens FCFS within ``max_num_batched_tokens``), so the prefill queue is an
  M/G/1 queue: utilisation ``ρ = λ E[S]``, mean wait ``E[W] = λ E[S²] / (2 (1 − ρ))``
  (Pollaczek-Khinchine; Kleinrock, *Queueing Systems* I, 1975, §5.7), and a wait tail
  taken as exponential beyond the probability ``ρ`` of waiting at all,
  ``P(W > t) ≈ ρ exp(−ρ t / E[W])`` (Kingman's heavy-traffic approximation), so
  ``W₉₅ = E[W]/ρ × ln(ρ / 0.05)`` when ``ρ > 0.05``, else 0. TTFT p95 is the 95th
  percentile of wait + service (the wait of an FCFS queue does not depend on the
  request's own service, so the two combine as a convolution) + one decode step (the
  step a new request waits for).
- **Decode.** Requests that are generating form the decode batch ``B``; by Little's law
  ``B = λ × output tokens × TPOT``. Prefills take the share ``ρ`` of the replica's time
  (chunked prefill interleaves them with decode steps), so a step of the batch lasts
  ``TPOT(B) / (1 − ρ)``; ``B`` is the fixed point of both, the smallest one at or above
  a batch of one request. On the plan's TPOT curve (straight lines between powers of two,
  :mod:`sizing.serving.tpot_curve`) it is solved exactly on the line it lies on; any other TPOT
  function is iterated from one request until a step changes the batch by at most 0.1 %.
- **Stability.** A replica whose prefill utilisation reaches :data:`MAX_PREFILL_UTILIZATION`,
  whose decode batch exceeds what its KV pool holds or :data:`MAX_DECODE_BATCH`, or whose
  iterated batch does not settle within 100 steps is overloaded: more replicas are needed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from sizing.serving.service_times import ServiceTable
from sizing.serving.tpot_curve import TpotCurve
from sizing.traffic.hit_rate import TierHits

MAX_PREFILL_UTILIZATION = 0.9
"""Highest prefill utilisation planned for: beyond it the M/G/1 wait grows without bound
for a small rise in load."""

MAX_DECODE_BATCH = 1024
"""Most requests one replica generates for at once: vLLM's default ``max_num_seqs`` on
cards of 70 GiB and more (``vllm/engine/arg_utils.py`` ``get_batch_defaults``; 256 on
smaller cards). A decode batch beyond it queues: the replica is overloaded."""


@dataclass(frozen=True)
class ReplicaLoad:
    """One replica at the busy hour.

    Attributes:
        requests_per_s: requests it serves, per s.
        prefill_utilization: share of its time spent in prefills and reloads (ρ).
        ttft_mean_ms: mean TTFT with queueing, ms.
        ttft_p95_ms: 95th percentile TTFT with queueing, ms (``inf`` when overloaded).
        tpot_ms: time per output token at the decode batch, ms (``inf`` when overloaded).
        decode_batch: requests generating at once.
        peak_batch: the largest batch the fixed point tried against the limit (0: none
            tried); a limit at or above it gives the same load.
    """

    requests_per_s: float
    prefill_utilization: float
    ttft_mean_ms: float
    ttft_p95_ms: float
    tpot_ms: float
    decode_batch: float
    peak_batch: float = field(default=0.0, compare=False, repr=False)

    @property
    def overloaded(self) -> bool:
        """True when the replica cannot keep up (prefill or decode)."""
        return math.isinf(self.ttft_p95_ms) or math.isinf(self.tpot_ms)


class Settled(NamedTuple):
    """One replica's decode batch at its fixed point, before the TTFT p95 is taken
    (:func:`settle`; :meth:`load` takes it).

    Attributes:
        overload: the load when the replica cannot keep up (``None``: it keeps up).
        decode_batch: requests generating at once.
        peak_batch: as :attr:`ReplicaLoad.peak_batch`.
        requests_per_s, rho, mean_s, wait_mean_ms, wait_p95_ms, service_p95_ms, step_ms:
            the rate, the prefill utilisation, the mean service time (s), the mean and
            95th-percentile wait, the service time's 95th percentile and one decode step
            (ms) that the load is made of.
    """

    overload: ReplicaLoad | None
    decode_batch: float
    peak_batch: float
    requests_per_s: float = 0.0
    rho: float = 0.0
    mean_s: float = 0.0
    wait_mean_ms: float = 0.0
    wait_p95_ms: float = 0.0
    service_p95_ms: float = 0.0
    step_ms: float = 0.0

    @property
    def overloaded(self) -> bool:
        """:attr:`ReplicaLoad.overloaded` of :meth:`load` (its TTFT p95 lies between the
        larger and the sum of the service time's and the wait's)."""
        isinf = math.isinf
        return (
            self.overload is not None
            or isinf(self.step_ms)
            or isinf(self.service_p95_ms)
            or isinf(self.wait_p95_ms)
        )

    def load(self, table: ServiceTable, hits: TierHits) -> ReplicaLoad:
        """The replica's load, its TTFT p95 taken from ``table`` under ``hits`` (those
        the batch was settled with)."""
        if self.overload is not None:
            return self.overload
        rho, wait_mean, step = self.rho, self.wait_mean_ms, self.step_ms
        p95 = table.p95_with_wait(hits, rho, wait_mean, self.service_p95_ms, self.wait_p95_ms)
        return ReplicaLoad(
            requests_per_s=self.requests_per_s,
            prefill_utilization=rho,
            ttft_mean_ms=self.mean_s * 1e3 + wait_mean + step,
            ttft_p95_ms=p95 + step,
            tpot_ms=step,
            decode_batch=self.decode_batch,
            peak_batch=self.peak_batch,
        )

    def meets(
        self, table: ServiceTable, hits: TierHits, ttft_p95_ms: float, tpot_ms: float
    ) -> bool:
        """Whether :meth:`load` meets both targets
        (:meth:`sizing.serving.evaluation.Evaluation.meets`),
        without the whole TTFT p95 bisection where its bounds decide the comparison
        (:meth:`~sizing.serving.service_times.ServiceTable.p95_with_wait`, ``decides``)."""
        if self.overload is not None:
            return self.overload.ttft_p95_ms <= ttft_p95_ms and self.overload.tpot_ms <= tpot_ms
        step = self.step_ms  # the load's TPOT; its TTFT p95 is the percentile + step
        if not step <= tpot_ms:
            return False
        p95 = table.p95_with_wait(
            hits,
            self.rho,
            self.wait_mean_ms,
            self.service_p95_ms,
            self.wait_p95_ms,
            decides=(step, ttft_p95_ms),
        )
        return p95 + step <= ttft_p95_ms


def _on_lines(curve: TpotCurve, rate: float, limit: float) -> tuple[float, float] | None:
    """The decode batch of :func:`settle` on ``curve`` and its TPOT (ms), solved on the
    curve's straight lines; ``None`` when it lies above ``limit`` (then the batch's
    iteration reports the overload as for any TPOT).

    ``rate`` is the requests per ms of a step, λ × output tokens / (1 − ρ) / 10³, so the
    batch is ``B = rate × TPOT(B)``. Iterated from one request, Little's law rises to the
    smallest such ``B`` at or above ``rate × TPOT(1)`` (TPOT does not fall with the
    batch); on the line of ``[low, 2 low]`` (:meth:`~sizing.serving.tpot_curve.TpotCurve.line`,
    TPOT ``start + (B − low) / low × rise``) ``B − rate × TPOT(B)`` is linear, so that
    ``B`` is where it crosses zero: ``low + (rate × start − low) / (1 − rate × rise /
    low)``, on the first line, walking up from the one at ``rate × TPOT(1)``, whose end
    reaches it. A curve whose lines fall gives ``None`` (the iteration holds for it)."""
    first = curve.point(1)
    batch = rate * first
    if not batch > 1.0:
        return (1.0, first) if limit >= 1.0 else None
    exponent = int(math.log2(batch))
    while True:
        low, start, rise = curve.line(exponent)
        if low > limit or rise < 0:
            return None
        if rate * (start + rise) <= 2 * low:  # the line's end is at or above the batch
            excess = rate * start - low  # ≥ 0: the batch is not below the line's start
            root = low + excess / (1 - rate * rise / low) if excess > 0 else low
            if root > limit:
                return None
            return root, start + (root - low) / low * rise
        exponent += 1


def settle(
    *,
    requests_per_s: float,
    table: ServiceTable,
    hits: TierHits,
    output_tokens: int,
    tpot_ms: Callable[[float], float],
    max_batch: float = math.inf,
) -> Settled:
    """The decode batch of one replica serving ``requests_per_s`` (arguments, errors and
    source as :func:`replica_load`), without the TTFT p95: a caller that needs only the
    batch (:meth:`sizing.serving.evaluation.Evaluator.__call__`'s first pass) skips the
    percentile."""
    if not math.isfinite(requests_per_s) or requests_per_s < 0:
        raise ValueError(f"requests_per_s must be a finite number >= 0, got {requests_per_s}")
    mean_s, second_s2, service_p95 = table.moments(hits)
    rho = requests_per_s * mean_s
    inf = math.inf
    if rho >= MAX_PREFILL_UTILIZATION:
        return Settled(ReplicaLoad(requests_per_s, rho, inf, inf, inf, inf), inf, 0.0)
    wait_mean = requests_per_s * second_s2 / (2 * (1 - rho)) * 1e3
    wait_p95 = wait_mean / rho * math.log(rho / 0.05) if rho > 0.05 else 0.0
    idle = 1 - rho
    limit = min(max_batch, MAX_DECODE_BATCH)
    if type(tpot_ms) is TpotCurve:
        exact = _on_lines(tpot_ms, requests_per_s * output_tokens / 1e3 / idle, limit)
        if exact is not None:
            batch, tpot = exact
            return Settled(
                None,
                batch,
                batch,
                requests_per_s,
                rho,
                mean_s,
                wait_mean,
                wait_p95,
                service_p95,
                tpot / idle,
            )
    # Any other TPOT (or a batch beyond the limit): Little's law iterated from one request.
    batch, step = 1.0, tpot_ms(1.0) / idle
    tokens_per_s = requests_per_s * output_tokens
    peak = 0.0
    for _ in range(100):
        new_batch = tokens_per_s * step / 1e3
        if not new_batch > 1.0:
            new_batch = 1.0
        if new_batch > peak:
            peak = new_batch
        if new_batch > limit:
            over = ReplicaLoad(requests_per_s, rho, inf, inf, inf, new_batch, peak)
            return Settled(over, new_batch, peak)
        new_step = tpot_ms(new_batch) / idle
        if abs(new_batch - batch) <= 1e-3 * batch:
            batch, step = new_batch, new_step
            break
        batch, step = new_batch, new_step
    else:
        over = ReplicaLoad(requests_per_s, rho, inf, inf, inf, batch, peak)
        return Settled(over, batch, peak)
    return Settled(
        None, batch, peak, requests_per_s, rho, mean_s, wait_mean, wait_p95, service_p95, step
    )


def replica_load(
    *,
    requests_per_s: float,
    table: ServiceTable,
    hits: TierHits,
    output_tokens: int,
    tpot_ms: Callable[[float], float],
    max_batch: float = math.inf,
) -> ReplicaLoad:
    """TTFT p95 and TPOT of one replica serving ``requests_per_s``.

    Args:
        requests_per_s: busy-hour requests per s on this replica (≥ 0).
        table: :func:`service_table` of the workload.
        hits: where returns find their KV on this replica.
        output_tokens: tokens generated per request.
        tpot_ms: ``batch → ms`` per decode step of a batch of that many requests.
        max_batch: most requests the replica's KV cache holds at once; a decode batch
            beyond it (or beyond :data:`MAX_DECODE_BATCH`) is an overload.

    Raises:
        ValueError: if ``requests_per_s`` is negative or not finite.

    Source: module docstring (M/G/1 prefill queue, Little's law for the decode batch).
    """
    return settle(
        requests_per_s=requests_per_s,
        table=table,
        hits=hits,
        output_tokens=output_tokens,
        tpot_ms=tpot_ms,
        max_batch=max_batch,
    ).load(table, hits)
