"""The verdict's sentences quote the plan's own figures.

- A plan that sells no tier is sized again on the GPUs its targets need without one;
  its "all fit" sentence then names that plan's room (the summary's
  ``conversations_on_gpus``), not the room of the plan sized with the tier. Case: the
  seed example (Qwen3-32B-FP8, 8,192 tokens, 500 users, 4 × RTX PRO 6000 SE per node,
  FP8 cache, 2,000 new conversations a day) with agent gaps and a TTFT p95 target of
  500 ms: 16 GPUs × 51 conversations = 816.
- The hit shares of returns (GPU, CPU tier, NVMe, shared tier, miss) are worded as
  whole percents that add to 100 (seed example: 73.31 % GPU, 24.81 % CPU, 1.89 % NVMe
  read 73 + 25 + 2 + 0 + 0).
"""

from __future__ import annotations

from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import make_plan
from sizing.serving.benefit import whole_percents
from sizing.summary import plan_summary
from tests.factories import plan_request

SEED = {
    "model": from_catalog("Qwen/Qwen3-32B-FP8"),
    "context_tokens": 8192,
    "users": 500,
    "gpu": "rtx-pro-6000-se",
    "gpus_per_node": 4,
    "kv_dtype": "fp8",
    "new_conversations_per_day": 2000,
}


def test_all_fit_names_the_room_of_the_plan_sold() -> None:
    plan = make_plan(plan_request(**SEED, gap_profile="agent", ttft_p95_ms=500))  # type: ignore[arg-type]
    s = plan_summary(plan)
    assert not s["offload_pays"]
    assert s["conversations_on_gpus"] == 816 == s["gpus_total"] * s["conversations_per_gpu"]
    (all_fit,) = [n for n in plan.verdict.reason_notes if n.code == "all_fit"]
    assert dict(all_fit.values) == {"users": 500, "on_gpus": 816}
    assert "(room for 816)" in all_fit.text


def test_tier_hits_add_up_to_100_percent() -> None:
    plan = make_plan(plan_request(**SEED))  # type: ignore[arg-type]
    (hits,) = [n for n in plan.verdict.reason_notes if n.code == "tier_hits"]
    v = dict(hits.values)
    shares = [v["gpu_pct"], v["cpu_pct"], v["nvme_pct"], v["shared_pct"], v["miss_pct"]]
    assert shares == [73, 25, 2, 0, 0]
    assert "2 % NVMe" in hits.text


def test_whole_percents_give_the_missing_points_to_the_largest_remainders() -> None:
    # 33.4 + 33.3 + 33.3 = 100: floors 33 + 33 + 33 = 99, one point to the largest rest.
    assert whole_percents((0.334, 0.333, 0.333)) == (34, 33, 33)
    assert sum(whole_percents((0.7331, 0.2481, 0.0189, 0.0, 0.0))) == 100
    assert whole_percents((0.5, 0.5)) == (50, 50)
