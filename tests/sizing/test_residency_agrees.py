"""Where the conversations rest agrees with where returns hit (sizing/memory/residency.py,
sizing/serving/serve.py): the NVMe tier keeps what its bytes hold of the users a cut CPU
tier leaves out, and a shared tier that would take almost no hits is not sold."""

from __future__ import annotations

from typing import Any

from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import Plan, make_plan
from sizing.serving.benefit import MIN_TIER_HITS
from tests.factories import plan_request

QWEN = from_catalog("Qwen/Qwen3-32B-FP8")


def _seed_at_scale(**changes: Any) -> Plan:
    # The seed model at 50,000 users and 2,000 new conversations a day on seven RTX PRO
    # 6000 per node with 24 × 96 GB: the search's cheapest answer for that workload.
    fields: dict[str, Any] = {
        "context_tokens": 8192,
        "users": 50_000,
        "new_conversations_per_day": 2000,
        "kv_dtype": "fp8",
        "gpu": "rtx-pro-6000-se",
        "gpus_per_node": 7,
        "max_host_memory_gb": 2304,
        **changes,
    }
    return make_plan(plan_request(model=QWEN, **fields))


def test_the_nvme_tier_keeps_the_users_a_cut_cpu_tier_leaves_out() -> None:
    plan = _seed_at_scale()
    where, serving = plan.placement, plan.serving
    assert serving is not None and serving.shared is None
    # Each node's 6.4 TB holds 6.4e12 // 2^30 = 5,960 conversations of 1 GiB; all nodes
    # together hold more than the users beyond the CPU tiers, so none is recomputed.
    nodes = plan.parallelism.nodes
    assert plan.nvme.conversations_per_node == 6_400_000_000_000 // 2**30
    beyond = 50_000 - where.on_gpus - where.in_cpu_tier
    assert 5_960 * nodes > beyond > 0
    assert (where.in_nvme_tier, where.recomputed) == (beyond, 0)
    # The hit rates say the same: returns hit the NVMe tier and almost none miss.
    assert serving.hits.nvme > MIN_TIER_HITS and serving.hits.miss < 0.02
    assert where.on_gpus + where.in_cpu_tier + where.in_nvme_tier == 50_000


def test_without_an_nvme_tier_the_same_users_are_recomputed() -> None:
    plan = _seed_at_scale(new_conversations_per_day=0, without_shared_tier=True)
    where = plan.placement
    assert where.in_nvme_tier == 0
    assert where.recomputed == 50_000 - where.on_gpus - where.in_cpu_tier > 0


def test_a_shared_tier_is_sold_only_where_returns_hit_it() -> None:
    # Beside an NVMe tier that holds every resting user, a shared tier would take almost
    # no returns: not sold. Without the NVMe tier it takes those returns: sold.
    with_nvme = _seed_at_scale().serving
    assert with_nvme is not None and with_nvme.shared is None
    without_nvme = _seed_at_scale(new_conversations_per_day=0).serving
    assert without_nvme is not None and without_nvme.shared is not None
    assert without_nvme.hits.shared >= MIN_TIER_HITS
