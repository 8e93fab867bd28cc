"""Replicas for the load, with and without a tier, on whole nodes.

The performance model is replaced here by linear stand-ins with round numbers (so that
the expected replica counts can be checked by hand); the plan wires in the real one.
"""

from __future__ import annotations

import pytest

from sizing.serving.evaluation import Capacities, Evaluation, Evaluator
from sizing.serving.replicas import scale
from sizing.serving.service_times import service_table
from sizing.traffic.hit_rate import ConversationShape, ReferenceStream
from sizing.traffic.return_gaps import PROFILES

SHAPE = ConversationShape(8, 681, 343)  # 8 turns filling 8,192 tokens


def _prefill(new: int, cached: int) -> float:
    """6,000 new tokens per s (the order of rtx6kpro issue 81's 5,877 tok/s at 64K)."""
    return new / 6.0


def _reload(tier: str, tokens: int) -> float:
    """10 ms fixed + 3 µs per token from CPU (vllm-blog-ttft-sweep fit), slower below."""
    return {"gpu": 0.0, "cpu": 10.0, "nvme": 40.0, "shared": 60.0}[tier] + tokens * 3e-3


def _miss(prompt: int) -> float:
    return _prefill(prompt, 0)


def _hit(tier: str, prompt: int, cached: int) -> float:
    return _reload(tier, cached) + _prefill(prompt - cached, cached)


def _evaluator(users: int, *, cpu_per_user: float = 8192.0) -> Evaluator:
    gaps = PROFILES["chat"]
    stream = ReferenceStream(users / (SHAPE.turns * gaps.mean_s), SHAPE, gaps)
    table = service_table(shape=SHAPE, shared_prefix_tokens=0, miss_ms=_miss, hit_ms=_hit)
    return Evaluator(
        stream=stream,
        table=table,
        capacities=Capacities(
            pool_tokens_per_replica=51 * 8192,  # seed: 51 conversations of 8K per card
            cpu_tokens_total=users * cpu_per_user,
            cpu_tokens_max_per_replica=1440 * 8192,  # 5,760 GB / 4 replicas at 1 GiB each
            nvme_tokens_per_replica=0.0,
            shared_tokens=0.0,
        ),
        tpot_ms=lambda batch: 20.0 + 0.3 * batch,
        mean_request_tokens=4500,
    )


def test_seed_load_fits_one_node() -> None:
    # 500 users, a turn every 217 s each: 2.3 requests/s over four replicas is light.
    s = scale(_evaluator(500), ttft_p95_ms=2000, tpot_ms=200, replicas_per_node=4)
    assert s.final.replicas == 4
    assert s.replicas_for_compute is not None and s.replicas_for_compute <= 4
    # Every user's conversation has a place on the GPUs or in the tier: few misses.
    assert s.final.hits.any_tier > 0.95 and s.final.hits.cpu > 0.2
    assert s.final.load.ttft_p95_ms < 2000
    # Without the tier the returns miss more and TTFT p95 is longer at the same GPUs.
    assert s.no_tier_same_gpus.hits.offload_tiers == 0.0
    assert s.no_tier_same_gpus.load.ttft_p95_ms > s.final.load.ttft_p95_ms


def test_compute_binds_for_many_users_and_is_the_smallest_count() -> None:
    ev = _evaluator(50_000)
    s = scale(ev, ttft_p95_ms=2000, tpot_ms=200, replicas_per_node=4)
    r = s.replicas_for_compute
    assert r is not None and r > 4
    assert ev(r, memory=False).meets(2000, 200)
    assert not ev(r - 1, memory=False).meets(2000, 200)
    # The decode batch of 50,000 users (about 113 requests of 4,500 tokens per replica)
    # outgrows a 51-conversation pool before the targets bind: memory sets the count.
    assert s.replicas_for_memory > r
    assert s.binding == "memory"
    assert s.final.replicas % 4 == 0 and s.final.replicas >= s.replicas_for_memory
    assert s.final.meets(2000, 200)
    # Without a tier the same TTFT p95 takes more GPUs.
    assert s.no_tier_replicas is None or s.no_tier_replicas > s.final.replicas


def test_unreachable_target_is_reported() -> None:
    # A 10 ms TTFT p95 is below a single 681-token prefill (113 ms): no count reaches it.
    s = scale(_evaluator(500), ttft_p95_ms=10, tpot_ms=200, replicas_per_node=4)
    assert s.replicas_for_compute is None
    assert s.binding == "ttft_p95"


@pytest.mark.parametrize("users", [5_000, 50_000])
def test_more_replicas_never_worse(users: int) -> None:
    ev = _evaluator(users)
    ttft = [ev(r).load.ttft_p95_ms for r in (8, 16, 32, 64)]
    assert ttft == sorted(ttft, reverse=True)


def test_benefit_names_the_figures() -> None:
    # Seed-sized workload: the tier serves returns the GPUs would miss.
    from sizing.serving.benefit import judge

    ev = _evaluator(500)
    s = scale(ev, ttft_p95_ms=2000, tpot_ms=200, replicas_per_node=4)
    b = judge(
        scale=s,
        table=ev.table,
        users=500,
        conversations_per_replica=51,
        gpus_per_replica=1,
        turns=8,
    )
    assert b.offload_pays
    codes = [n.code for n in b.notes]
    assert codes[0] == "tier_hits"
    assert "gpus_saved" in codes
    assert b.gpus_saved == (s.no_tier_replicas or 0) - s.final.replicas
    assert "% of returns hit the CPU tier" in b.notes[0].text
    # Everyone fits on the GPUs: no tier.
    few = judge(
        scale=s,
        table=ev.table,
        users=150,
        conversations_per_replica=51,
        gpus_per_replica=1,
        turns=8,
    )
    assert not few.offload_pays and few.notes[0].code == "all_fit"


def test_short_prompts_do_not_pay() -> None:
    # 128-token conversations: a CPU hit (10 ms fixed + the new 32 tokens) saves little
    # against recomputing 48 to 112 tokens at 6,000 tokens/s (8 to 19 ms).
    from sizing.serving.benefit import judge

    table = service_table(
        shape=ConversationShape(4, 16, 16),
        shared_prefix_tokens=0,
        miss_ms=_miss,
        hit_ms=_hit,
    )
    ev = _evaluator(5000)
    ev.table = table
    s = scale(ev, ttft_p95_ms=2000, tpot_ms=200, replicas_per_node=4)
    b = judge(
        scale=s,
        table=table,
        users=5000,
        conversations_per_replica=800,
        gpus_per_replica=1,
        turns=4,
    )
    assert not b.offload_pays
    assert "recompute_cheap" in [n.code for n in b.notes]


@pytest.mark.parametrize("ms", [300.0, 600.0, 900.0])
def test_gpu_share_for_p95_is_the_share_where_the_percentile_reaches_the_time(ms: float) -> None:
    # The 95th percentile of the service time (ServiceTable.moments) at a GPU share of
    # returns h, the rest missing: at most ``ms`` from the share named on, above below it.
    from sizing.traffic.hit_rate import TierHits

    table = _evaluator(500).table

    def p95(h: float) -> float:
        return table.moments(TierHits(h, 0.0, 0.0, 0.0, (0.0,) * 4, 0.5))[2]

    share = table.gpu_share_for_p95(ms)
    assert share is not None and 0 < share < 1
    assert p95(share + 1e-9) <= ms
    assert p95(share - 1e-6) > ms


def test_gpu_share_for_p95_below_every_hit_is_unreachable() -> None:
    # A first turn prefills 681 tokens in 113.5 ms (6,000 tokens per s): a p95 below
    # that time is out of reach whatever the GPU serves.
    assert _evaluator(500).table.gpu_share_for_p95(100.0) is None


@pytest.mark.parametrize("users", [5_000, 50_000])
def test_no_tier_floor_is_never_above_the_replicas_that_reach_the_target(users: int) -> None:
    ev = _evaluator(users)
    s = scale(ev, ttft_p95_ms=2000, tpot_ms=200, replicas_per_node=4)
    target = s.final.load.ttft_p95_ms
    floor = ev.guess("no_tier", s.no_tier_same_gpus, targets_ms=(target, 200.0))
    assert floor is not None
    # Every count below the floor misses the target without a tier (checked one by one).
    assert all(ev(r, tiers=False).load.ttft_p95_ms > target for r in range(1, floor))
    assert s.no_tier_replicas is not None and floor <= s.no_tier_replicas


def test_no_tier_search_gives_the_smallest_whole_nodes() -> None:
    # The search tries whole nodes from its floor; the answer is the first node count
    # whose replicas reach the tiered TTFT p95 (every count checked one by one).
    ev = _evaluator(50_000)
    s = scale(ev, ttft_p95_ms=2000, tpot_ms=200, replicas_per_node=4)
    target = max(s.final.load.ttft_p95_ms, 1.0) * (1 + 1e-9)
    first = next(
        r
        for r in range(s.final.replicas, 2048)
        if ev(r, tiers=False).load.ttft_p95_ms <= target
        and ev(r, tiers=False).load.tpot_ms <= max(200, s.final.load.tpot_ms)
    )
    assert s.no_tier_replicas == -(-first // 4) * 4


def test_smallest_gives_the_same_count_from_every_first_guess() -> None:
    # The guess only sets where the search starts: from below, at, above the answer or
    # at the top of the range, it ends at the count that meets the targets next to one
    # that does not.
    ev = _evaluator(50_000)

    def ok(e: Evaluation) -> bool:
        return e.meets(2000, 200)

    found = {
        start: ev.smallest(ok, low=1, high=2048, start=start, memory=False)
        for start in (None, 1, 40, 75, 76, 77, 120, 2048)
    }
    r = found[None]
    assert r is not None and set(found.values()) == {r}
    assert ok(ev(r, memory=False)) and not ok(ev(r - 1, memory=False))


def test_smallest_over_whole_nodes_is_the_first_node_that_meets() -> None:
    ev = _evaluator(50_000)

    def ok(e: Evaluation) -> bool:
        return e.meets(2000, 200)

    single = ev.smallest(ok, low=4, high=2048, memory=False)
    assert single is not None
    for start in (None, 4, 60, 80, 2048):
        nodes = ev.smallest(ok, low=4, high=2048, start=start, multiple=4, memory=False)
        assert nodes == -(-single // 4) * 4


@pytest.mark.parametrize("users", [5_000, 50_000])
def test_guesses_from_the_answers_own_hit_rates_land_on_it(users: int) -> None:
    # With the stand-ins' linear TPOT and the hit rates at the answer held fixed, the
    # load model solved for the count (sizing.serving.first_guess) gives the answer back, to a
    # replica: the compute count, and from it the count whose pools hold the batch.
    ev = _evaluator(users)
    s = scale(ev, ttft_p95_ms=2000, tpot_ms=200, replicas_per_node=4)
    r = s.replicas_for_compute
    assert r is not None
    near = ev(r, memory=False)
    compute = ev.guess("compute", near, targets_ms=(2000, 200))
    pools = ev.guess("pools", near, targets_ms=(2000, 200))
    assert compute is not None and abs(compute - r) <= 1
    assert s.binding == "memory"
    assert pools is not None and abs(pools - s.replicas_for_memory) <= 1


def test_compute_guess_is_none_below_an_unloaded_request() -> None:
    # A 10 ms TTFT p95 is below a single 681-token prefill (113 ms) at any hit rate.
    ev = _evaluator(500)
    assert ev.guess("compute", ev(2048), targets_ms=(10, 200)) is None


def test_an_evaluation_within_the_pool_stands_for_both_memory_switches() -> None:
    # 500 users on 4 replicas: a decode batch of about 5 requests, far below the
    # 51 × 8,192 / 4,500 = 92.8 the pool holds; the pool's limit never acts: one evaluation.
    ev = _evaluator(500)
    light = ev(4, memory=False)
    assert light.peak_batch < 51 * 8192 / 4500
    assert ev(4) is light
    assert _evaluator(500)(4) == light  # evaluated afresh with the limit
    # 50,000 users on 80 replicas: about 130 requests each without the limit, beyond the
    # pool, so the limit changes the load (overloaded) and the count is evaluated with it.
    heavy = _evaluator(50_000)
    unlimited = heavy(80, memory=False)
    assert unlimited.peak_batch > 51 * 8192 / 4500 and not unlimited.load.overloaded
    limited = heavy(80)
    assert limited.load.overloaded and limited == _evaluator(50_000)(80)
