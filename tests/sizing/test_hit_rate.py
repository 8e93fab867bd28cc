"""Hit rates of returning users against a discrete-event LRU simulation of the same workload."""

from __future__ import annotations

import math

import pytest

from sizing.traffic.hit_rate import (
    ConversationShape,
    ReferenceStream,
    hit_rates,
    tier_tokens_for_hit_rate,
    touched_tokens,
    window_s,
)
from sizing.traffic.return_gaps import PROFILES, GapDistribution
from tests.sizing.lru_sim import simulate

# A chat workload: 2 conversations a second, 4 turns of 500 prompt and 200 output tokens,
# the Mooncake conversation trace's gaps (p50 123 s, p90 483 s).
STREAM = ReferenceStream(2.0, ConversationShape(4, 500, 200), PROFILES["chat"])


@pytest.fixture(scope="module")
def simulated() -> dict[float, float]:
    """Simulated share of returns held by one LRU tier sized for 20/50/80/95 % hits."""
    out = {}
    for q in (0.2, 0.5, 0.8, 0.95):
        held, _miss = simulate(
            STREAM, [tier_tokens_for_hit_rate(STREAM, q)], horizon_s=9000, warmup_s=3000
        )
        out[q] = held
    return out


@pytest.mark.parametrize("target", [0.2, 0.5, 0.8, 0.95])
def test_one_tier_matches_lru_simulation(simulated: dict[float, float], target: float) -> None:
    # The tier is sized so that the model predicts `target`; the simulation of the same
    # workload must agree within 4 points (Che's approximation on renewal traffic).
    capacity = tier_tokens_for_hit_rate(STREAM, target)
    predicted = hit_rates(STREAM, gpu_tokens=capacity).gpu
    assert predicted == pytest.approx(target, abs=1e-6)
    assert simulated[target] == pytest.approx(predicted, abs=0.03)


def test_new_kv_rate_window_over_predicts_small_tiers(simulated: dict[float, float]) -> None:
    # The plain window model C / r_new (r_new = new KV only) over-predicts small tiers
    # (offload_benefit_points benefit-lru-sim-mooncake-traces: 1.2-2x at <= 3M tokens);
    # the simulation shows the same bias, which the touched-tokens window removes.
    capacity = tier_tokens_for_hit_rate(STREAM, 0.2)
    naive = STREAM.gaps.cdf(capacity / STREAM.new_tokens_per_s)
    assert naive > 1.2 * simulated[0.2]


def test_inclusive_tiers_match_simulation() -> None:
    # GPU sized for 30 % of returns, CPU for 85 %, shared (two instances) for 97 %.
    gpu = tier_tokens_for_hit_rate(STREAM, 0.3)
    cpu = tier_tokens_for_hit_rate(STREAM, 0.85)
    hits = hit_rates(STREAM, gpu_tokens=gpu, cpu_tokens=cpu)
    gpu_sim, cpu_sim, miss_sim = simulate(STREAM, [gpu, cpu], horizon_s=9000, warmup_s=3000)
    assert hits.gpu == pytest.approx(gpu_sim, abs=0.03)
    assert hits.cpu == pytest.approx(cpu_sim, abs=0.03)
    assert hits.miss == pytest.approx(miss_sim, abs=0.03)


def test_shared_tier_sees_every_instance() -> None:
    # Two instances writing one shared tier of twice one instance's capacity get the
    # same window as one instance alone with its capacity.
    c = tier_tokens_for_hit_rate(STREAM, 0.9)
    alone = hit_rates(STREAM, gpu_tokens=0, shared_tokens=c)
    pooled = hit_rates(STREAM, gpu_tokens=0, shared_tokens=2 * c, shared_instances=2)
    assert pooled.shared == pytest.approx(alone.shared, abs=1e-6)
    assert alone.shared == pytest.approx(0.9, abs=1e-6)


def test_smaller_tier_only_mirrors() -> None:
    # A CPU tier smaller than the GPU cache adds no hits (vLLM offloading guide, seed).
    gpu = tier_tokens_for_hit_rate(STREAM, 0.6)
    hits = hit_rates(STREAM, gpu_tokens=gpu, cpu_tokens=gpu / 2)
    assert hits.cpu == 0.0
    assert hits.gpu == pytest.approx(0.6, abs=1e-6)


def test_touched_tokens_limits() -> None:
    # Short windows: every touched conversation counts (λ × Σ s_k per s); long windows:
    # only new KV (λ × s_K per s).
    shape = STREAM.shape
    every = STREAM.conversations_per_s * sum(shape.prompt_tokens(k) for k in range(1, 5))
    assert touched_tokens(STREAM, 1e-3) / 1e-3 == pytest.approx(every, rel=1e-3)
    slope = (touched_tokens(STREAM, 2e6) - touched_tokens(STREAM, 1e6)) / 1e6
    assert slope == pytest.approx(STREAM.new_tokens_per_s, rel=1e-6)


def test_conversation_shape_tokens() -> None:
    # 4 turns of 500 + 200: prompts 500, 1200, 1900, 2600 (offload_prompt_only).
    shape = ConversationShape(4, 500, 200)
    assert [shape.prompt_tokens(k) for k in range(1, 5)] == [500, 1200, 1900, 2600]
    assert shape.prompt_tokens_total == 6200
    assert shape.max_token_hit_rate == pytest.approx(3600 / 6200)
    assert ConversationShape(1, 100, 50).max_token_hit_rate == 0.0


def test_window_edges() -> None:
    assert window_s(STREAM, 0) == 0.0
    idle = ReferenceStream(0.0, STREAM.shape, STREAM.gaps)
    assert math.isinf(window_s(idle, 1000))
    assert hit_rates(idle, gpu_tokens=1000).gpu == 1.0
    with pytest.raises(ValueError, match="capacity_tokens"):
        window_s(STREAM, -1)
    with pytest.raises(ValueError, match="capacity_tokens"):
        window_s(STREAM, math.inf)


def test_gap_distribution_fit() -> None:
    # Mooncake conversation trace: p50 123 s, p90 483 s, p99 1,473 s (benefit-lru-sim-
    # mooncake-traces); the log-normal through p50 and p90 lands on the p99 within 1 %.
    chat = PROFILES["chat"]
    assert chat.cdf(123) == pytest.approx(0.5)
    assert chat.cdf(483) == pytest.approx(0.9)
    assert chat.quantile(0.99) == pytest.approx(1473, rel=0.01)
    # E[min(G, inf)] is the mean; E[min(G, t)] <= t.
    assert chat.mean_truncated_s(math.inf) == chat.mean_s
    assert chat.mean_truncated_s(10) < 10
    with pytest.raises(ValueError, match="longer than the median"):
        GapDistribution(100, 50)
    with pytest.raises(ValueError, match="median_s"):
        GapDistribution(float("nan"), 50)
