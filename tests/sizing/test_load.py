"""One replica under load: M/G/1 prefill queue and the decode batch, against known results
and a discrete-event simulation of the same queue."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest

from sizing.serving.load import replica_load
from sizing.serving.service_times import TIERS, ServiceTable, service_table
from sizing.serving.tpot_curve import TpotCurve
from sizing.traffic.hit_rate import ConversationShape, TierHits


def _hits(gpu: float = 0.0, cpu: float = 0.0) -> TierHits:
    return TierHits(gpu, cpu, 0.0, 0.0, (0.0, 0.0, 0.0, 0.0), 0.0)


def _linear_prefill(new: int, cached: int) -> float:
    """1 ms per 100 new tokens, nothing for cached ones (a stand-in, not the perf model)."""
    return new / 100


def _reload(tier: str, tokens: int) -> float:
    return {"gpu": 0.0, "cpu": 5.0, "nvme": 20.0, "shared": 40.0}[tier]


def _miss(prompt: int) -> float:
    return _linear_prefill(prompt, 0)


def _hit(tier: str, prompt: int, cached: int) -> float:
    return _reload(tier, cached) + _linear_prefill(prompt - cached, cached)


def _table(shape: ConversationShape) -> ServiceTable:
    return service_table(shape=shape, shared_prefix_tokens=0, miss_ms=_miss, hit_ms=_hit)


def test_single_turn_is_an_md1_queue() -> None:
    # Turns 1, 10,000-token prompts: a deterministic 100 ms prefill. At 5 requests/s the
    # utilisation is 0.5 and the M/D/1 mean wait ρS/(2(1−ρ)) is 50 ms (Kleinrock §5.7).
    table = _table(ConversationShape(1, 10_000, 0))
    load = replica_load(
        requests_per_s=5.0, table=table, hits=_hits(), output_tokens=0, tpot_ms=lambda b: 0.0
    )
    assert load.prefill_utilization == pytest.approx(0.5)
    assert load.ttft_mean_ms == pytest.approx(100 + 50)
    # p95: 100 ms + E[W]/ρ ln(ρ/0.05) = 100 + 100 ln 10.
    assert load.ttft_p95_ms == pytest.approx(100 + 100 * math.log(10))


def test_decode_batch_is_littles_law_fixed_point() -> None:
    # TPOT(B) = 20 + 0.1 B ms, 5 requests/s of 200 output tokens, prefill negligible:
    # B = 5 × 200 × (20 + 0.1 B) / 1000  →  B = 20 / 0.9.
    table = service_table(
        shape=ConversationShape(1, 1, 200),
        shared_prefix_tokens=0,
        miss_ms=lambda prompt: 0.0,
        hit_ms=lambda tier, prompt, cached: 0.0,
    )
    load = replica_load(
        requests_per_s=5.0,
        table=table,
        hits=_hits(),
        output_tokens=200,
        tpot_ms=lambda b: 20 + 0.1 * b,
    )
    assert load.decode_batch == pytest.approx(20 / 0.9, rel=1e-3)
    assert load.tpot_ms == pytest.approx(20 + 2 / 0.9, rel=1e-3)
    assert not load.overloaded


def test_overload_is_reported_not_extrapolated() -> None:
    table = _table(ConversationShape(1, 10_000, 100))
    busy = replica_load(
        requests_per_s=9.5, table=table, hits=_hits(), output_tokens=100, tpot_ms=lambda b: 10.0
    )
    assert busy.overloaded and busy.prefill_utilization == pytest.approx(0.95)
    # Decode that cannot keep up: every step 1 ms more per request in the batch.
    slow = replica_load(
        requests_per_s=1.0, table=table, hits=_hits(), output_tokens=2000, tpot_ms=lambda b: b
    )
    assert slow.overloaded
    capped = replica_load(
        requests_per_s=1.0,
        table=table,
        hits=_hits(),
        output_tokens=100,
        tpot_ms=lambda b: 20.0,
        max_batch=1.5,
    )
    assert capped.overloaded


def test_service_table_per_turn_and_tier() -> None:
    # 3 turns of 1,000 + 200 tokens: turn 2 reloads the 1,000-token prompt of turn 1 and
    # prefills 1,200 new tokens (12 ms), turn 3 reloads 2,200.
    table = _table(ConversationShape(3, 1000, 200))
    first, second, third = table.rows
    assert first.miss_ms == 10.0 and first.hit_ms == (10.0,) * 4
    assert second.miss_ms == 22.0 and second.reload_tokens == 1000
    assert second.hit_ms == (12.0, 17.0, 32.0, 52.0)
    assert third.reload_tokens == 2200 and third.miss_ms == 34.0
    assert len(TIERS) == 4
    long = _table(ConversationShape(200, 10, 10))
    assert len(long.rows) == 12
    assert sum(r.weight for r in long.rows) == pytest.approx(1.0)


def _simulated_p95(rate: float, mixture: list[tuple[float, float]], n: int = 60_000) -> float:
    """FCFS single server, Poisson arrivals, service drawn from ``mixture`` (ms)."""
    rng = random.Random(7)
    probs = [p for p, _ in mixture]
    times = [ms / 1e3 for _, ms in mixture]
    t = free = 0.0
    ttft = []
    for _ in range(n):
        t += rng.expovariate(rate)
        service = rng.choices(times, probs)[0]
        start = max(t, free)
        free = start + service
        ttft.append((free - t) * 1e3)
    ttft.sort()
    return ttft[int(0.95 * n)]


@pytest.mark.parametrize("rate", [4.0, 8.0, 11.0])
def test_ttft_p95_against_simulated_queue(rate: float) -> None:
    # 4 turns of 4,000 + 500 tokens; 60 % of returns hit the CPU tier: within 15 % of the
    # simulated queue.
    table = _table(ConversationShape(4, 4000, 500))
    hits = _hits(cpu=0.6)
    load = replica_load(
        requests_per_s=rate, table=table, hits=hits, output_tokens=0, tpot_ms=lambda b: 0.0
    )
    simulated = _simulated_p95(rate, table.mixture(hits))
    assert load.ttft_p95_ms == pytest.approx(simulated, rel=0.15)


def _no_prefill(output_tokens: int) -> ServiceTable:
    return service_table(
        shape=ConversationShape(1, 1, output_tokens),
        shared_prefix_tokens=0,
        miss_ms=lambda prompt: 0.0,
        hit_ms=lambda tier, prompt, cached: 0.0,
    )


@pytest.mark.parametrize(
    ("tpot", "rate", "batch", "tpot_ms"),
    [
        # The Little's law above on a TpotCurve, whose lines hold TPOT = 20 + 0.1 B
        # exactly: B = 20 / 0.9, with no iteration error.
        (lambda b: 20 + 0.1 * b, 5.0, 20 / 0.9, 20 + 2 / 0.9),
        # TPOT = 10 + B ms, 4.5 requests/s of 200 tokens: B = 0.9 (10 + B), so B = 90
        # and TPOT 100 ms. From one request (B = 9.9) the root lies four lines up, on
        # [64, 128], and the iteration creeps towards it by a factor 0.9 a step.
        (lambda b: 10.0 + b, 4.5, 90.0, 100.0),
    ],
)
def test_batch_on_a_tpot_curve_is_the_exact_fixed_point(
    tpot: Callable[[float], float], rate: float, batch: float, tpot_ms: float
) -> None:
    curve = TpotCurve(tpot)
    exact, iterated = (
        replica_load(
            requests_per_s=rate, table=_no_prefill(200), hits=_hits(), output_tokens=200, tpot_ms=f
        )
        for f in (curve, lambda b: curve(b))
    )
    assert exact.decode_batch == pytest.approx(batch, rel=1e-12)
    assert exact.tpot_ms == pytest.approx(tpot_ms, rel=1e-12)
    # The iteration stops once a step moves the batch by at most 0.1 %: below the root,
    # within 1 % of it.
    assert iterated.decode_batch == pytest.approx(batch, rel=1e-2)
    assert iterated.decode_batch <= exact.decode_batch


def test_batch_beyond_the_pool_is_an_overload_on_a_tpot_curve() -> None:
    # B = 20 / 0.9 ≈ 22.2 as above, but the pool holds 20 requests.
    curve = TpotCurve(lambda batch: 20 + 0.1 * batch)
    load = replica_load(
        requests_per_s=5.0,
        table=_no_prefill(200),
        hits=_hits(),
        output_tokens=200,
        tpot_ms=curve,
        max_batch=20.0,
    )
    assert load.overloaded and load.decode_batch > 20.0
