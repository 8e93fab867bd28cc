"""A capped NVMe tier holds only the conversations its bytes hold.

Case: Qwen3-32B-FP8, 8,192 tokens, 100,000 users, 10,000,000 new conversations a day,
4 × RTX PRO 6000 SE per node, FP8 cache. A day needs 223.7 TB per node but the 4 bays
hold 4 × 12.8 TB = 51.2 TB (the ``nvme_capped`` warning), so the tier keeps the most
recent part of the day: each node holds ⌊51.2 × 10^12 B / conversation bytes⌋
conversations, the plan ``nodes`` times that; the users' own conversations are among
them (the tiers are inclusive, ``sizing.traffic.hit_rate``), so the day's earlier conversations
on NVMe are that count less the users, not the 10,000,000 − 100,000 of the whole day.
"""

from __future__ import annotations

from sizing.memory.residency import placement
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import make_plan
from sizing.summary import plan_summary
from sizing.units import TB
from tests.factories import plan_request

CAPPED = {
    "model": from_catalog("Qwen/Qwen3-32B-FP8"),
    "context_tokens": 8192,
    "users": 100_000,
    "gpu": "rtx-pro-6000-se",
    "gpus_per_node": 4,
    "kv_dtype": "fp8",
    "new_conversations_per_day": 10_000_000,
}


def test_a_capped_tier_counts_what_its_bytes_hold() -> None:
    plan = make_plan(plan_request(**CAPPED))  # type: ignore[arg-type]
    s = plan_summary(plan)
    nvme = plan.nvme
    assert nvme.capped and nvme.drive is not None
    assert (nvme.drive_count, nvme.drive.capacity_tb) == (4, 12.8)
    tier_bytes = round(nvme.drive_count * nvme.drive.capacity_tb * TB)
    # 8,192 tokens × 131,072 B a token (the summary's kv_bytes_per_token).
    assert nvme.conversation_bytes == 8192 * s["kv_bytes_per_token"] == 1_073_741_824
    per_node = tier_bytes // nvme.conversation_bytes  # 47,683
    held = per_node * s["nodes"]
    assert s["conversations_on_nvme"] == held - CAPPED["users"]
    assert s["conversations_on_nvme"] < CAPPED["new_conversations_per_day"] - CAPPED["users"]


def test_an_uncapped_tier_still_holds_the_whole_day() -> None:
    where = placement(
        users=500,
        conversations_on_gpus=364,
        cpu_tier_gib=200.0,
        nvme_sized=True,
        new_conversations_per_day=2000,
        nvme_conversations=5960,
    )
    assert where.on_nvme == 2000 - 500


def test_a_tier_smaller_than_the_users_holds_no_earlier_conversation() -> None:
    where = placement(
        users=500,
        conversations_on_gpus=364,
        cpu_tier_gib=200.0,
        nvme_sized=True,
        new_conversations_per_day=2000,
        nvme_conversations=400,
    )
    assert where.on_nvme == 0
