"""What an evaluation of a replica count takes again instead of computing it afresh: the
TPOT curve's lines read inside the decode batch's fixed point, the moments of hit rates
seen before, the settled batch of the same hit shares, against fresh computations and
plain formulas of the same rules."""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import replace
from itertools import accumulate

import pytest

from sizing.serving.evaluation import Capacities, Evaluator
from sizing.serving.load import replica_load, settle
from sizing.serving.service_times import ServiceTable, service_table
from sizing.serving.tpot_curve import TpotCurve
from sizing.traffic.hit_rate import ConversationShape, ReferenceStream, TierHits
from sizing.traffic.return_gaps import PROFILES

SHAPE = ConversationShape(8, 681, 343)


def _hit(tier: str, prompt: int, cached: int) -> float:
    reload = {"gpu": 0.0, "cpu": 10.0, "nvme": 40.0, "shared": 60.0}[tier] + cached * 3e-3
    return reload + (prompt - cached) / 6.0


def _table(shape: ConversationShape = SHAPE) -> ServiceTable:
    return service_table(
        shape=shape, shared_prefix_tokens=0, miss_ms=lambda prompt: prompt / 6.0, hit_ms=_hit
    )


def _hits(gpu: float, cpu: float = 0.0, nvme: float = 0.0, shared: float = 0.0) -> TierHits:
    return TierHits(gpu, cpu, nvme, shared, (1.0, 2.0, 3.0, 4.0), 0.5)


def _curve(calls: list[int] | None = None) -> TpotCurve:
    def at(batch: int) -> float:
        if calls is not None:
            calls.append(batch)
        return 20.0 + 0.3 * batch + (4.0 if batch >= 64 else 0.0)  # bent at 64

    return TpotCurve(at)


def _mixture_moments(table: ServiceTable, hits: TierHits) -> tuple[float, float, float]:
    """The moments as one loop over every outcome in time order states them."""
    shares = (hits.gpu, hits.cpu, hits.nvme, hits.shared, hits.miss, 1.0)
    mean = second = acc = p95 = 0.0
    for ms, weight, outcome in table.outcomes:
        p = weight * shares[outcome]
        if p <= 0:
            continue
        mean += p * (ms / 1e3)
        second += p * (ms / 1e3) * (ms / 1e3)
        if acc < 0.95 - 1e-12:
            p95 = ms
        acc += p
    return mean, second, p95


def _mixture_p95(table: ServiceTable, hits: TierHits, rho: float, wait_ms: float) -> float:
    """The TTFT p95 bisection over prefix and suffix sums of every outcome."""
    shares = (hits.gpu, hits.cpu, hits.nvme, hits.shared, hits.miss, 1.0)
    pairs = [(ms, w * shares[o]) for ms, w, o in table.outcomes if not w * shares[o] <= 0]
    times = [ms for ms, _p in pairs]
    service_p95 = _mixture_moments(table, hits)[2]
    wait_p95 = wait_ms / rho * math.log(rho / 0.05) if rho > 0.05 else 0.0
    rate = rho / wait_ms
    lo, hi = max(service_p95, wait_p95), service_p95 + wait_p95
    top = hi
    below = [0.0]
    for ms, p in pairs:
        below.append(below[-1] + p * math.exp((ms - top) * rate) if ms < top else below[-1])
    above = list(accumulate(reversed([p for _ms, p in pairs]), initial=0.0))[::-1]
    for _ in range(12):
        if hi - lo <= 0.5:
            break
        mid = (lo + hi) / 2
        k = bisect.bisect_left(times, mid)
        if above[k] + rho * math.exp((top - mid) * rate) * below[k] > 0.05:
            lo = mid
        else:
            hi = mid
    return hi


def test_the_curve_is_the_model_at_powers_of_two_and_lines_between() -> None:
    calls: list[int] = []
    curve = _curve(calls)
    assert curve(0.5) == curve(1.0) == 20.3
    assert curve(64) == 20.0 + 0.3 * 64 + 4.0
    low, high = curve(32), curve(64)
    assert curve(48) == low + (48 - 32) / 32 * (high - low)
    assert curve(math.inf) == math.inf and curve(math.nan) == math.inf
    assert sorted(set(calls)) == [1, 32, 64]  # the model only where a figure was asked for


@pytest.mark.parametrize("max_batch", [math.inf, 40.0, 0.5])
def test_the_fixed_point_on_the_curve_is_exact_and_where_calling_it_converges(
    max_batch: float,
) -> None:
    # On the curve's lines the settled batch is Little's law's fixed point itself (source:
    # sizing/serving/load.py, Decode): B = λ × output tokens × TPOT(B) / (1 − ρ), to rounding. The
    # same TPOT called as a function is iterated to within 0.1 % a step, so it lands on
    # the same batch within a few per cent, overloads alike, and the TTFT p95 agrees.
    table = _table()
    hits = _hits(0.3, 0.5)
    rng = random.Random(5)
    exact = 0
    for rate in [0.005, 0.05, 0.5, 2.0] + [rng.uniform(0.005, 2.5) for _ in range(60)]:
        curve = _curve()
        read, called = (
            settle(
                requests_per_s=rate,
                table=table,
                hits=hits,
                output_tokens=343,
                tpot_ms=tpot,
                max_batch=max_batch,
            )
            for tpot in (curve, curve.__call__)
        )
        assert read.overloaded == called.overloaded
        if read.overloaded:
            assert read == called  # the overload is the iteration's
            continue
        step = read.step_ms
        assert step == pytest.approx(curve(read.decode_batch) / (1 - read.rho), rel=1e-12)
        if read.decode_batch > 1.0:
            exact += 1
            assert read.decode_batch == pytest.approx(rate * 343 * step / 1e3, rel=1e-12)
        assert read.decode_batch == pytest.approx(called.decode_batch, rel=0.03)
        assert read.peak_batch == read.decode_batch
        load = read.load(table, hits)
        assert load.ttft_p95_ms == pytest.approx(called.load(table, hits).ttft_p95_ms, rel=0.03)
        assert load == replica_load(
            requests_per_s=rate,
            table=table,
            hits=hits,
            output_tokens=343,
            tpot_ms=curve,
            max_batch=max_batch,
        )
    assert exact > 10 or max_batch < 1


def test_moments_and_percentile_follow_every_outcome_in_time_order() -> None:
    rng = random.Random(3)
    table = _table(ConversationShape(20, 500, 300))  # 12 sampled turns
    cases = [_hits(0.0), _hits(1.0), _hits(0.2, 0.0, 0.3), _hits(5e-324, 0.4)]  # a share too
    for _ in range(40):  # small to weigh anything (5e-324 × 1/12 is 0)
        g, c, n = rng.random() / 3, rng.random() / 3, rng.random() / 3
        cases.append(_hits(g, c, n, rng.choice([0.0, 0.01])))
    for hits in cases:
        assert table.moments(hits) == _mixture_moments(table, hits)
        for rho, wait_ms in ((0.3, 40.0), (0.04, 2.0), (0.85, 900.0)):
            p95 = _mixture_moments(table, hits)[2]
            wait_p95 = wait_ms / rho * math.log(rho / 0.05) if rho > 0.05 else 0.0
            got = table.p95_with_wait(hits, rho, wait_ms, p95, wait_p95)
            assert got == _mixture_p95(table, hits, rho, wait_ms)


def test_moments_seen_before_are_those_of_a_fresh_table() -> None:
    table = _table()
    seen = [_hits(0.1 * i, 0.05 * i) for i in range(8)]
    first = [table.moments(h) for h in seen]
    again = [table.moments(h) for h in reversed(seen)]
    fresh = [_table().moments(h) for h in reversed(seen)]
    assert again == fresh == first[::-1]
    # Equal hit rates in another object are the same moments, not another's kept ones.
    assert table.moments(replace(seen[3])) == first[3]
    assert table.moments(_hits(0.31, 0.15)) != first[3]


def _evaluator(users: int, shared_tokens: float, cpu_per_user: float = 8192.0) -> Evaluator:
    gaps = PROFILES["chat"]
    return Evaluator(
        stream=ReferenceStream(users / (SHAPE.turns * gaps.mean_s), SHAPE, gaps),
        table=_table(),
        capacities=Capacities(
            pool_tokens_per_replica=51 * 8192,
            cpu_tokens_total=users * cpu_per_user,
            cpu_tokens_max_per_replica=1440 * 8192,
            nvme_tokens_per_replica=0.0,
            shared_tokens=shared_tokens,
        ),
        tpot_ms=_curve(),
        mean_request_tokens=4500,
    )


@pytest.mark.parametrize("cpu_per_user", [8192.0, 2000.0])
def test_a_shared_tier_evaluation_that_settles_as_one_without_is_a_fresh_one(
    cpu_per_user: float,
) -> None:
    # 20,000 users on 64 replicas: the plan evaluated without the shared tier, then with
    # it (the CPU tiers holding every user, or a quarter of each conversation): the same
    # figures as an evaluator that never saw the count.
    users, replicas = 20_000, 64
    ev = _evaluator(users, 0.0, cpu_per_user)
    without = ev(replicas)
    ev.cap = replace(ev.cap, shared_tokens=float(users * 8192))
    with_shared = ev(replicas)
    fresh = _evaluator(users, float(users * 8192), cpu_per_user)(replicas)
    assert with_shared == fresh
    if cpu_per_user == 8192.0:  # the shared tier holds nothing the CPU tiers do not
        assert (with_shared.hits.shared, with_shared.load) == (0.0, without.load)
    else:  # it holds more: its hits are its own, not the tiers' before it
        assert with_shared.hits.shared > 0 and with_shared.load != without.load


def test_a_percentile_asked_only_against_a_limit_compares_as_the_whole_bisection() -> None:
    # The bisection stopped once a bound shows the side of the limit (p95_with_wait's
    # decides): the same answer to "percentile + step at most the limit" as the whole one,
    # for limits on both sides and close to the answer.
    table = _table()
    rng = random.Random(11)
    for _ in range(60):
        hits = _hits(rng.random() / 2, rng.random() / 2)
        rho, wait_ms = rng.uniform(0.06, 0.89), rng.uniform(1.0, 900.0)
        p95 = table.moments(hits)[2]
        wait_p95 = wait_ms / rho * math.log(rho / 0.05)
        step = rng.uniform(5.0, 200.0)
        whole = table.p95_with_wait(hits, rho, wait_ms, p95, wait_p95) + step
        for limit in (whole, whole - 0.3, whole + 0.3, whole * 0.8, whole * 1.2, p95 + step):
            stopped = table.p95_with_wait(hits, rho, wait_ms, p95, wait_p95, decides=(step, limit))
            assert (stopped + step <= limit) == (whole <= limit)


def test_a_count_checked_against_targets_meets_them_as_its_evaluation_does() -> None:
    # Evaluator.meets (the searches' check, settled passes kept) against the evaluation
    # of the same count by an evaluator that never checked it, for targets around it.
    users = 20_000
    checked = _evaluator(users, 0.0)
    for replicas in (20, 40, 64, 100):
        for memory in (True, False):
            for tiers in (True, False):
                e = _evaluator(users, 0.0)(replicas, tiers=tiers, memory=memory)
                ttft, tpot = e.load.ttft_p95_ms, e.load.tpot_ms
                for targets in ((ttft, tpot), (ttft * 0.99, tpot), (ttft, tpot * 0.99)):
                    assert checked.meets(replicas, *targets, tiers=tiers, memory=memory) == (
                        e.meets(*targets)
                    )
                assert checked(replicas, tiers=tiers, memory=memory) == e
