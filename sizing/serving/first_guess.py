"""First guesses of the replica searches of :mod:`sizing.serving.replicas`.

A guess only says where a search starts: the search itself checks every count it
answers with, so a guess changes how many counts are evaluated, never the answer. Each
guess takes one evaluation's figures as fixed and solves the load model of
:mod:`sizing.serving.load` for the replica count ``R``, with ``λ`` the busy hour's requests of
the whole plan, ``o`` the output tokens of a request and ``c = ρ R`` the prefill work
(replicas kept busy prefilling; it falls slowly as more replicas hit more):

- **Targets** (:func:`compute_guess`). The decode step ``TPOT(B) / (1 − ρ)`` meets the
  TPOT target ``P`` where the batch of Little's law ``B = λ/R × o × P`` is the root of
  ``TPOT(B) + c o⁻¹ λ⁻¹ B = P``; the TTFT p95 is taken as the service time's 95th
  percentile, plus the wait's (``W₉₅`` of the M/G/1 queue), plus one step, and meets
  its target below one prefill utilisation ``ρ_T``: ``R = c / ρ_T``. Both, and the
  utilisation limit, give the larger count.
- **Pools** (:func:`pools_guess`). With ``B`` at what a pool holds, Little's law
  ``B = λ/R × o × TPOT(B) / (1 − ρ)`` gives ``R = c + λ o TPOT(B) / B``.
- **Without a tier** (:func:`no_tier_floor`). The TTFT p95 is at least the service
  time's 95th percentile plus one decode step, so the GPU prefix cache must serve the
  share of returns :meth:`~sizing.serving.service_times.ServiceTable.gpu_share_for_p95` names; a
  pool
  keeps that share once ``R`` replicas split the stream so that it holds the window of
  that share (the log-normal gap's quantile; :func:`~sizing.traffic.hit_rate.touched_tokens` of
  the whole stream, divided by ``R``). No smaller count can reach the target: the search
  starts there.

TPOT is in ms, ``λ`` per s (hence the factors 10³ in the code).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

from sizing.serving.load import MAX_DECODE_BATCH, MAX_PREFILL_UTILIZATION, ReplicaLoad
from sizing.serving.service_times import ServiceTable
from sizing.serving.tpot_curve import TpotCurve
from sizing.traffic.hit_rate import ReferenceStream, TierHits, touched_tokens

_STANDARD_NORMAL = NormalDist()


def _tpot_replicas(
    stream: ReferenceStream, tpot_ms: Callable[[float], float], work: float, target_ms: float
) -> float | None:
    """Replicas whose decode step meets ``target_ms`` (module docstring), ``None``: none."""
    # A TpotCurve's powers of two are its points (the same figures as calling it).
    at = tpot_ms.point if type(tpot_ms) is TpotCurve else lambda batch: tpot_ms(float(batch))
    first = at(1)
    if first >= target_ms:
        return None
    rate_tokens = stream.turns_per_s * stream.shape.output_tokens  # λ o, per s
    if rate_tokens <= 0:
        return work / (1 - first / target_ms)
    slope = 1e3 * work / rate_tokens
    # The excess of the step over the target at a batch: TPOT + slope × batch − target.
    low, low_excess = 1.0, at(1) + slope * 1.0 - target_ms
    if low_excess >= 0:  # the batch stays at one request: the step alone binds
        return work / (1 - first / target_ms)
    # TPOT is linear between powers of two (sizing.serving.tpot_curve), so is the excess: find
    # the first power of two past the root, then the root on that line.
    while low < MAX_DECODE_BATCH:
        high = 2 * low
        high_excess = at(int(high)) + slope * high - target_ms
        if high_excess >= 0:
            batch = low + -low_excess / (high_excess - low_excess) * (high - low)
            return rate_tokens * target_ms / 1e3 / batch
        low, low_excess = high, high_excess
    return rate_tokens * target_ms / 1e3 / MAX_DECODE_BATCH


def _ttft_utilization(
    table: ServiceTable, hits: TierHits, first_step_ms: float, target_ms: float
) -> float | None:
    """Highest prefill utilisation whose TTFT p95, taken as in the module docstring,
    meets ``target_ms``; ``None``: not even without load."""
    mean_s, second_s2, service_p95 = table.moments(hits)
    if service_p95 + first_step_ms > target_ms or mean_s <= 0:
        return None
    spread_ms = second_s2 / mean_s / 2 * 1e3  # E[W] (1 − ρ) / ρ
    log = math.log
    # ttft(ρ) = service p95 + spread / (1 − ρ) × ln(ρ / 0.05) (0 up to ρ = 0.05) + the
    # first step / (1 − ρ), written out at the limit and at each midpoint below.
    lo, hi = 0.0, MAX_PREFILL_UTILIZATION
    wait = spread_ms / (1 - hi) * log(hi / 0.05) if hi > 0.05 else 0.0
    if service_p95 + wait + first_step_ms / (1 - hi) <= target_ms:
        return hi
    for _ in range(10):  # to 0.1 % of the utilisation limit
        mid = (lo + hi) / 2
        wait = spread_ms / (1 - mid) * log(mid / 0.05) if mid > 0.05 else 0.0
        if service_p95 + wait + first_step_ms / (1 - mid) <= target_ms:
            lo = mid
        else:
            hi = mid
    return lo


def compute_guess(
    *,
    stream: ReferenceStream,
    table: ServiceTable,
    tpot_ms: Callable[[float], float],
    replicas: int,
    hits: TierHits,
    load: ReplicaLoad,
    targets_ms: tuple[float, float],
) -> int | None:
    """Replicas that meet ``targets_ms`` (TTFT p95, TPOT) if every replica kept the hit
    rates ``hits`` and prefill work of one evaluation at ``replicas`` (``load``);
    ``None`` when even no load misses a target. Source: module docstring."""
    work = load.prefill_utilization * replicas
    by_tpot = _tpot_replicas(stream, tpot_ms, work, targets_ms[1])
    rho = _ttft_utilization(table, hits, tpot_ms(1.0), targets_ms[0])
    if by_tpot is None or rho is None or rho <= 0:
        return None
    return max(1, math.ceil(max(by_tpot, work / rho)))


def pools_guess(
    *,
    stream: ReferenceStream,
    tpot_ms: Callable[[float], float],
    pool_batch: float,
    replicas: int,
    load: ReplicaLoad,
) -> int | None:
    """Replicas whose pools, each holding ``pool_batch`` requests, hold their decode
    batch, with the prefill work of one evaluation at ``replicas`` (``load``); ``None``
    when a pool holds no request. Source: module docstring."""
    batch = min(pool_batch, MAX_DECODE_BATCH)
    if batch < 1:
        return None
    decode = stream.turns_per_s * stream.shape.output_tokens * tpot_ms(batch) / 1e3 / batch
    return math.ceil(load.prefill_utilization * replicas + decode)


def no_tier_floor(
    *,
    stream: ReferenceStream,
    table: ServiceTable,
    tpot_ms: Callable[[float], float],
    pool_tokens: float,
    ttft_p95_ms: float,
) -> int | None:
    """Fewest replicas, each with a GPU pool of ``pool_tokens``, that can reach
    ``ttft_p95_ms`` with only the GPU prefix cache; ``None`` when no count can. Source:
    module docstring."""
    share = table.gpu_share_for_p95(ttft_p95_ms - tpot_ms(1.0))
    if share is None or share >= 1:
        return None
    if share <= 0:
        return 1
    gaps = stream.gaps
    window_s = math.exp(gaps.mu + gaps.sigma * _STANDARD_NORMAL.inv_cdf(share))
    return max(1, math.ceil(touched_tokens(stream, window_s) / pool_tokens))
