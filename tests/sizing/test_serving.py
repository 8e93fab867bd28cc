"""The plan under traffic, with the real performance model: the seed example, many users,
short prompts, and a GPU without a measured basis."""

from __future__ import annotations

from copy import copy
from dataclasses import replace

import pytest

from sizing.model.spec import from_catalog
from sizing.performance import model_shape
from sizing.plan.memo import PlanMemo, transfer_estimate
from sizing.plan.orchestrator import make_plan
from sizing.search.cheapest import recommend
from sizing.serving.replica_model import turn_times
from sizing.summary import TrafficKeys, plan_summary
from sizing.traffic.profile import Traffic
from tests.factories import plan_request

QWEN = from_catalog("Qwen/Qwen3-32B-FP8")


def _plan(users: int, context: int = 8192, **kw: object) -> dict[str, object]:
    kw = {"new_conversations_per_day": 2000, **kw}
    request = plan_request(model=QWEN, context_tokens=context, users=users, **kw)
    return plan_summary(make_plan(request))


def test_seed_example_keeps_its_tier_and_names_the_figures() -> None:
    # Seed: 500 users, one node of 4 × RTX PRO 6000 SE, 500 GiB tier, 24 × 48 GB.
    s = _plan(500)
    assert (s["nodes"], s["replicas"], s["cpu_tier_total_gib"], s["host_memory_gb"]) == (
        1,
        4,
        500.0,
        1152,
    )
    assert s["offload_pays"] is True
    # Every user's conversation has a place on the GPUs or in the tier: returns hit.
    assert s["gpu_hit_rate"] + s["cpu_hit_rate"] > 0.95  # type: ignore[operator]
    assert s["ttft_p95_ms"] < s["ttft_p95_without_tier_ms"] < 2000  # type: ignore[operator]
    assert s["shared_tier_tb"] == 0.0 and s["shared_tier_gbps"] == 0.0
    assert s["gpus_saved"] > 0  # type: ignore[operator]
    assert any("% of returns hit the CPU tier" in r for r in s["verdict_reasons"])  # type: ignore[attr-defined]
    assert set(TrafficKeys.__annotations__) <= set(s)


def test_fifty_thousand_users_get_nodes_a_router_and_a_shared_tier() -> None:
    # The traffic issue: 50,000 users were refused ("54,071 GB of host memory … more
    # than the 6,144 GB one node can hold"); now N identical nodes. On nodes of 24 × 48 GB
    # without an NVMe tier the CPU tiers hold part of the resting conversations and a
    # shared tier the rest.
    s = _plan(50_000, max_host_memory_gb=1152, new_conversations_per_day=0)
    assert s["nodes"] > 1  # type: ignore[operator]
    assert s["host_memory_gb"] == 1152
    # Every user's 1 GiB conversation once in the shared tier: 50,000 × 2^30 B = 53.69 TB.
    assert s["shared_tier_tb"] == pytest.approx(53.69, abs=0.01)
    assert s["shared_tier_gbps"] > 0 and s["shared_tier_hit_rate"] >= 0.05  # type: ignore[operator]
    assert "--routing-logic session" in s["router"]  # type: ignore[operator]
    assert s["binding"] in ("memory", "ttft_p95", "tpot")
    assert s["ttft_p95_ms"] <= s["ttft_p95_target_ms"]  # type: ignore[operator]
    assert s["tpot_ms"] <= s["tpot_target_ms"]  # type: ignore[operator]
    assert s["gpus_total"] >= max(s["gpus_for_compute"], s["gpus_for_memory"])  # type: ignore[type-var]


def test_fifty_thousand_users_whose_cpu_tiers_hold_everyone_buy_no_shared_tier() -> None:
    # With the plan's own host memory every resting conversation has its node's CPU tier:
    # a shared tier would take no returns and is not sold (sizing/serving/serve.py).
    s = _plan(50_000)
    assert s["nodes"] > 1 and s["shared_tier_tb"] == 0.0  # type: ignore[operator]
    assert s["conversations_recomputed"] == 0


def test_short_prompts_are_not_sold_a_tier() -> None:
    # The traffic issue: 5,000 users at a 512-token context were sold a 312 GiB tier.
    s = _plan(5000, context=512)
    assert s["offload_pays"] is False
    assert s["cpu_tier_total_gib"] == 0.0
    assert any("about as cheap to recompute" in r for r in s["verdict_reasons"])  # type: ignore[attr-defined]


def test_more_users_need_more_gpus() -> None:
    # 5,000 users of the seed model do not fit the compute of four cards.
    small, big = _plan(500), _plan(5000)
    assert big["gpus_total"] > small["gpus_total"]  # type: ignore[operator]


def test_a_target_below_one_request_is_sized_at_the_relaxed_target_and_marked_missed() -> None:
    # sizing/serving/targets.py: one floor (what a request takes without load) for a
    # typed target and a default alike; 5 ms is below it, so the plan is sized for
    # 1.5 × the floor and says that it misses the 5 ms.
    request = plan_request(
        model=QWEN,
        context_tokens=8192,
        users=500,
        new_conversations_per_day=2000,
        traffic=Traffic(ttft_p95_ms=5),
    )
    serving = make_plan(request).serving
    assert serving is not None
    assert serving.ttft_p95_target_ms == 5
    assert serving.ttft_p95_sized_ms == pytest.approx(1.5 * serving.ttft_p95_floor_ms)
    assert serving.final.load.ttft_p95_ms > 5 and not serving.meets_targets
    (note,) = serving.target_notes
    assert dict(note.values)["target_ms"] == 5
    assert dict(note.values)["used_ms"] == round(serving.ttft_p95_sized_ms)
    s = plan_summary(make_plan(request))
    assert s["meets_targets"] is False and s["ttft_p95_target_ms"] == 5.0


def test_typing_the_default_target_plans_as_the_default() -> None:
    # The default TTFT p95 target is 2,000 ms (sizing/traffic/profile.py); typed, it is
    # the same target and the same plan.
    typed = _plan(500, traffic=Traffic(ttft_p95_ms=2000))
    assert typed == _plan(500)


def test_gpu_without_its_own_measurement_is_sized_on_its_family_estimate() -> None:
    # The L40S has no prefill measurement: it is timed from the Hopper class with the
    # across-family band (sizing/data/performance.json families, ±56 %), so its verdict
    # rests on TTFT as on a measured card, never on memory alone.
    s = _plan(500, gpu="l40s")
    assert s["ttft_p95_ms"] is not None and s["cpu_hit_rate"] is not None
    assert s["ttft_band_pct"] == 56
    notes = [*s["verdict_reasons"], *s["warnings"]]  # type: ignore[misc]
    assert not [n for n in notes if "no measured basis" in n.lower()]
    assert any("NVIDIA L40S (Ada family)" in n for n in s["performance_notes"])  # type: ignore[attr-defined]


def test_a_search_memo_changes_no_plan() -> None:
    # The plans of one search share what its PlanMemo holds (TTFT per turn, the
    # evaluations of replica counts, the hit-rate windows: sizing/serving/replica_model.py;
    # the layouts and the reload figures: sizing/plan/memo.py). A whole configuration
    # search fills one memo with every GPU type, TP size, DIMM layout and NVMe option;
    # each layout sized afterwards with that memo must equal the same layout sized with
    # a new one, and a layout sized twice takes its performance model from the memo.
    layouts = [
        {"gpu": "rtx-pro-6000-se", "gpus_per_node": 2, "max_host_memory_gb": 384},
        {"gpu": "rtx-pro-6000-se", "gpus_per_node": 4, "tensor_parallel_size": 2},
        {"gpu": "h200-nvl", "gpus_per_node": 2, "new_conversations_per_day": 0},
        # 2 nodes with a shared tier, and the same without one (search variants)
        *(
            {"gpu": "rtx-pro-6000-se", "gpus_per_node": 2, "tensor_parallel_size": 2}
            | {"max_host_memory_gb": 384, "new_conversations_per_day": 0, "without_shared_tier": s}
            for s in (False, True)
        ),
    ]
    workload = {"context_tokens": 8192, "users": 650, "new_conversations_per_day": 2000}
    requests = [plan_request(model=QWEN, **{**workload, **kw}) for kw in layouts]
    memo = PlanMemo()
    recommend(
        requests[0],
        gpu_slugs=["rtx-pro-6000-se", "h200-nvl", "h100-nvl"],
        price=lambda bom: sum(line.quantity for line in bom.lines),
        memo=memo,
    )
    assert memo.layouts and memo.replica_models.tables
    shared = []
    for request in requests:
        warm = make_plan(request, memo)
        shared.append(warm.serving is not None and warm.serving.shared is not None)
        cold = make_plan(replace(request, model=copy(QWEN)))
        assert warm.serving is not None and cold.serving is not None
        assert warm.serving == cold.serving
        assert warm.parallelism == cold.parallelism and warm.host == cold.host
        assert warm.transfer == cold.transfer
    assert shared[-2:] == [True, False]
    tables = dict(memo.replica_models.tables)
    again = make_plan(requests[1], memo)
    assert memo.replica_models.tables == tables  # nothing bound afresh
    first = make_plan(requests[1], memo)
    assert again.serving is not None and first.serving is not None
    assert again.serving.evaluator is not None and first.serving.evaluator is not None
    assert again.serving.evaluator.table is first.serving.evaluator.table


def test_the_cached_figures_change_no_plan() -> None:
    # The performance model's times per turn, the reload figures and the model's shape are
    # pure functions cached by value (sizing/serving/replica_model.py turn_times,
    # sizing/plan/memo.py transfer_estimate, sizing.performance.model_shape): a plan for
    # another number of users reads them from the caches, and equals the plan made
    # after the caches were emptied.
    make_plan(plan_request(model=QWEN, context_tokens=8192, users=500))
    hits = turn_times.cache_info().hits
    warm = make_plan(plan_request(model=QWEN, context_tokens=8192, users=503))
    assert turn_times.cache_info().hits > hits
    for cached in (turn_times, transfer_estimate, model_shape):
        cached.cache_clear()
    cold = make_plan(plan_request(model=QWEN, context_tokens=8192, users=503))
    assert repr(warm) == repr(cold)
    assert warm.serving is not None and cold.serving is not None
    assert warm.serving.evaluator is not None and cold.serving.evaluator is not None
    assert warm.serving.evaluator.table == cold.serving.evaluator.table
