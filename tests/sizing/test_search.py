"""The configuration search (sizing/search.py): hand-checked cheapest answers, hard
constraints never broken, and an answer when nothing meets the targets."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sizing import catalog
from sizing.bom import BASEBOARD_CHASSIS, BASEBOARD_GPUS, PCIE_CHASSIS, Bom, bill_of_materials
from sizing.configuration import Configuration
from sizing.errors import SizingError
from sizing.model import from_catalog
from sizing.pareto import pareto_front
from sizing.plan import PlanRequest, make_plan, validate
from sizing.search import FRONT_PRICE_FACTOR, candidates, evaluate, recommend
from sizing.tradeoffs import reasons, why_text
from tests.factories import plan_request

QWEN = from_catalog("Qwen/Qwen3-32B-FP8")
SEED = plan_request(model=QWEN, context_tokens=8192, users=500, new_conversations_per_day=2000)


def table_price(prices: Mapping[str, int]) -> object:
    """A price function over a small price list; any SKU not listed costs 0."""

    def price(bom: Bom) -> int:
        return sum(prices.get(line.sku, 0) * line.quantity for line in bom.lines)

    return price


# A toy price list whose answer is worked out by hand below: only GPUs and DIMMs cost.
TOY = {
    "GPU-RTX-PRO-6000-SE": 1000,
    # Priced below the Server Edition so that only the chassis rule keeps it out.
    "GPU-RTX-PRO-6000-WS": 600,
    "GPU-H200-NVL": 5000,
    "DIMM-DDR5-32GB": 100,
    "DIMM-DDR5-48GB": 200,
    "DIMM-DDR5-64GB": 300,
    "DIMM-DDR5-96GB": 400,
    "DIMM-DDR5-128GB": 500,
    "DIMM-DDR5-256GB": 600,
}


def test_cheapest_known_by_hand() -> None:
    # Seed workload (DESIGN §3): 500 conversations of 1 GiB, a 500 GiB ≈ 537 GB tier.
    # 2 × RTX PRO 6000 SE (96 GB each): host need max(2 × 192, 537 + 192) = 729 GB →
    # 24 × 32 GB = 768 GB (DESIGN §3.3 rule) → 2 × 1000 + 24 × 100 = 4,400.
    # 3 × RTX: need 537 + 288 = 825 GB → 24 × 48 GB → 3,000 + 4,800 = 7,800.
    # 2 × H200 NVL (141 GB): need 537 + 282 = 819 GB → 24 × 48 GB → 10,000 + 4,800.
    rec = recommend(
        SEED,
        gpu_slugs=["rtx-pro-6000-se", "h200-nvl"],
        price=table_price(TOY),  # type: ignore[arg-type]
        gpus_per_node=(2, 3),
    )
    prices = [
        (c.price, c.plan.request.workload.gpu, c.plan.request.workload.gpus_per_node)
        for c in rec.cheapest
    ]
    # NVMe drives cost 0 here, so with and without the NVMe tier tie at 4,400.
    assert prices[0] == (4400, "rtx-pro-6000-se", 2)
    assert prices[1] == (4400, "rtx-pro-6000-se", 2)
    assert prices[2] == (7800, "rtx-pro-6000-se", 3)
    first = rec.cheapest[0]
    assert (first.plan.host.dimm_count, first.plan.host.dimm_gb) == (24, 32)
    # Reference: the requested 4 × RTX with 24 × 48 GB (seed layout) = 4,000 + 4,800.
    assert rec.reference is not None and rec.reference.price == 8800
    codes = [r.code for r in reasons(first, rec)]
    assert codes[:2] == ["cheapest", "below_reference_by"]
    # 4,400 against 8,800 (both above): (8,800 - 4,400) / 8,800 = 50 %.
    assert "50 % below the requested layout (4 × NVIDIA RTX PRO 6000" in why_text(first, rec)
    assert "a CPU tier of 500 GiB" in why_text(first, rec)


def test_gpu_price_changes_the_answer() -> None:
    # With H200 NVL at 500 (a tenth of the RTX's 1,000 … 5,000 before), 2 × H200 NVL
    # costs 1,000 + 24 × 48 GB × 200 = 5,800 against 2 × RTX's 2,000 + 2,400 = 4,400:
    # still the RTX; at 0 the H200's 4,800 of DIMMs still loses to 4,400.
    cheap_h200 = {**TOY, "GPU-H200-NVL": 0}
    rec = recommend(
        SEED,
        gpu_slugs=["rtx-pro-6000-se", "h200-nvl"],
        price=table_price(cheap_h200),  # type: ignore[arg-type]
        gpus_per_node=(2,),
    )
    assert [(c.plan.request.workload.gpu, c.price) for c in rec.cheapest][:1] == [
        ("rtx-pro-6000-se", 4400)
    ]
    # Make DIMMs dear: 2 × H200 NVL then needs 24 × 48 GB at 1,000 = 24,000 against the
    # RTX's 24 × 32 GB at 1,000 = 24,000 + 2,000: the free H200 wins.
    dear = {**cheap_h200, "DIMM-DDR5-32GB": 1000, "DIMM-DDR5-48GB": 1000}
    rec = recommend(
        SEED,
        gpu_slugs=["rtx-pro-6000-se", "h200-nvl"],
        price=table_price(dear),  # type: ignore[arg-type]
        gpus_per_node=(2,),
    )
    assert (rec.cheapest[0].plan.request.workload.gpu, rec.cheapest[0].price) == ("h200-nvl", 24000)


def test_unpriced_parts_are_left_out() -> None:
    def price(bom: Bom) -> int | None:
        return None if any(ln.sku == "GPU-H200-NVL" for ln in bom.lines) else 1

    rec = recommend(SEED, gpu_slugs=["rtx-pro-6000-se", "h200-nvl"], price=price)
    assert rec.unpriced == ("h200-nvl",)
    assert {c.plan.request.workload.gpu for c in rec.feasible} == {"rtx-pro-6000-se"}


def test_nothing_fits_names_the_binding_limit() -> None:
    # 1,000,000 users at 32K: their busy hour needs more than 512 nodes of any size
    # (at 8K it already takes 244 nodes of 8 × RTX PRO 6000 SE; sizing.serving).
    big = plan_request(model=QWEN, context_tokens=32768, users=1_000_000)
    rec = recommend(big, gpu_slugs=["rtx-pro-6000-se"], price=table_price(TOY))  # type: ignore[arg-type]
    assert rec.cheapest == () and rec.pareto == () and rec.feasible == ()
    assert rec.binding == "nodes"
    assert rec.nearest is None


def test_missed_target_names_the_nearest_configuration() -> None:
    # All 2,000 users active at once must be resident on the GPUs (active_share 1).
    # 8 × RTX PRO 6000 SE hold 8 × 51 = 408 (DESIGN §3.2): nothing reaches 2,000.
    busy = plan_request(model=QWEN, context_tokens=8192, users=2000, active_share=1.0)
    rec = recommend(busy, gpu_slugs=["rtx-pro-6000-se"], price=table_price(TOY))  # type: ignore[arg-type]
    assert rec.cheapest == ()
    assert rec.binding == "GPU capacity for active users"
    assert rec.nearest is not None
    assert rec.nearest.plan.request.workload.gpus_per_node == 8
    assert rec.nearest.resident_conversations == 408


def test_pareto_front_is_not_dominated() -> None:
    rec = recommend(SEED, gpu_slugs=["rtx-pro-6000-se", "h200-nvl", "l40s"], price=table_price(TOY))  # type: ignore[arg-type]
    for a in rec.pareto:
        for b in rec.feasible:
            assert not (
                b.price <= a.price
                and b.resident_conversations >= a.resident_conversations
                and (b.price, b.resident_conversations) != (a.price, a.resident_conversations)
            )


SLUGS = ["rtx-pro-6000-se", "rtx-pro-6000-ws", "h200-nvl", "l40s", "a100-pcie-80gb", "h200-sxm"]
MODELS = ["Qwen/Qwen3-32B-FP8", "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-70B-Instruct"]


def _violations(config: Configuration[int], request: PlanRequest, slugs: list[str]) -> list[str]:
    """Hard constraints checked from the configuration's own plan, re-made from scratch."""
    r = config.plan.request
    plan = make_plan(r)  # raises if the request does not fit
    bill_of_materials(plan)  # raises if the parts exceed the chassis
    chassis = BASEBOARD_CHASSIS if r.workload.gpu in BASEBOARD_GPUS else PCIE_CHASSIS
    out = []
    if r.workload.gpu not in slugs:
        out.append("GPU not searched")
    if catalog.gpu(r.workload.gpu).cooling not in catalog.chassis_cooling()[chassis.sku]:
        out.append("GPU the chassis does not take")
    if plan.parallelism.conversations_per_replica < 1:
        out.append("one conversation does not fit")
    if plan.host.dimm_count > chassis.dimm_slots:
        out.append("DIMMs beyond the slots")
    if plan.nvme.drive is not None and plan.nvme.drive_count > chassis.nvme_bays:
        out.append("drives beyond the bays")
    if plan.cpu_tier.total_gib > 0 and (
        plan.cpu_tier.users_per_instance <= plan.cpu_tier.gpu_conversation_capacity
    ):
        out.append("tier only mirrors the GPU")
    if r.workload.kv_dtype == "fp8" and (
        request.workload.kv_dtype != "fp8" or not catalog.gpu(r.workload.gpu).fp8_kv_cache
    ):
        out.append("FP8 where not allowed")
    if not 2 <= r.workload.gpus_per_node <= 8:
        out.append("GPU count outside 2 to 8")
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model_id=st.sampled_from(MODELS),
    context=st.sampled_from([512, 4096, 8192, 32768, 131072]),
    users=st.integers(min_value=1, max_value=20_000),
    per_day=st.sampled_from([0, 500, 20_000, 200_000]),
    kv_dtype=st.sampled_from(["fp8", "auto"]),
    active=st.sampled_from([None, 0.05, 0.5]),
)
def test_no_configuration_breaks_a_hard_constraint(
    model_id: str, context: int, users: int, per_day: int, kv_dtype: str, active: float | None
) -> None:
    request = plan_request(
        model=from_catalog(model_id),
        context_tokens=context,
        users=users,
        kv_dtype=kv_dtype,
        new_conversations_per_day=per_day,
        active_share=active,
    )
    try:
        validate(request)
    except SizingError:
        assume(False)  # out-of-range input is refused before any search (plan.validate)
    rec = recommend(request, gpu_slugs=SLUGS, price=table_price(TOY))  # type: ignore[arg-type]
    listed = [*rec.cheapest, *rec.pareto, *rec.feasible]
    listed += [c for c in (rec.nearest, rec.reference) if c is not None]
    for config in listed:
        assert _violations(config, request, [*SLUGS, request.workload.gpu]) == []
    for config in [*rec.cheapest, *rec.pareto]:
        assert config.meets_targets
    assert [c.price for c in rec.cheapest] == sorted(c.price for c in rec.cheapest)
    if not rec.cheapest:
        assert rec.binding


def test_workstation_edition_is_skipped_though_cheapest() -> None:
    # The WS card costs 600 against the SE's 1,000 (TOY) with the same 96 GB, so only
    # the chassis rule (``chassis`` in hardware.json) keeps it out of the answer.
    rec = recommend(
        SEED,
        gpu_slugs=["rtx-pro-6000-ws", "rtx-pro-6000-se"],
        price=table_price(TOY),  # type: ignore[arg-type]
        gpus_per_node=(2, 3),
    )
    assert rec.cheapest and rec.cheapest[0].plan.request.workload.gpu == "rtx-pro-6000-se"
    listed = [*rec.cheapest, *rec.pareto, *rec.feasible]
    assert all(c.plan.request.workload.gpu != "rtx-pro-6000-ws" for c in listed)
    refused = [r for r in rec.rejected if r.gpu_slug == "rtx-pro-6000-ws"]
    assert refused and all(r.binding == "GPU cooling per chassis" for r in refused)


@pytest.mark.parametrize("users", [60, 500, 3000])
def test_pruning_keeps_the_exhaustive_answer(users: int) -> None:
    # Every configuration sized (no pruning) against the search's branch and bound.
    request = plan_request(
        model=QWEN, context_tokens=8192, users=users, new_conversations_per_day=2000
    )
    slugs = ["rtx-pro-6000-se", "h200-nvl", "l40s", "b200", "a100-pcie-80gb"]
    price = table_price({**TOY, "GPU-L40S": 700, "GPU-B200": 9000, "GPU-A100-PCIE-80GB": 1500})
    rec = recommend(request, gpu_slugs=slugs, price=price)  # type: ignore[arg-type]
    every = [evaluate(c, price) for c in candidates(request, slugs)]  # type: ignore[arg-type]
    sized = [c for c in every if isinstance(c, Configuration) and c.meets_targets]
    sized = [
        c
        for c in sized
        if c.plan.nvme.drive is not None or not c.plan.request.workload.new_conversations_per_day
    ]
    prices = sorted(c.price for c in sized)
    assert [c.price for c in rec.cheapest] == prices[:3]
    cap = max(prices[0] * FRONT_PRICE_FACTOR, prices[2])
    front = pareto_front([c for c in sized if c.price <= cap])
    assert [(c.price, c.resident_conversations) for c in rec.pareto] == [
        (c.price, c.resident_conversations) for c in front
    ]
    no_tier = [c.price for c in sized if not c.has_cpu_tier]
    tier = [c.price for c in sized if c.has_cpu_tier and c.price <= cap]
    with_tier, without = rec.dram_trade
    assert (without.price if without else None) == (min(no_tier) if no_tier else None)
    assert (with_tier.price if with_tier else None) == (min(tier) if tier else None)
    assert rec.evaluated <= rec.considered
