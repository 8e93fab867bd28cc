"""The configuration search (sizing/search/cheapest.py): hand-checked cheapest answers, hard
constraints never broken, and an answer when nothing meets the targets."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sizing.bom.lines import Bom, bill_of_materials
from sizing.errors import SizingError
from sizing.hardware import catalog
from sizing.hardware.chassis import BASEBOARD_CHASSIS, PCIE_CHASSIS, on_baseboard
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import PlanRequest, make_plan, validate
from sizing.search.cheapest import FRONT_PRICE_FACTOR, exhaustive, recommend
from sizing.search.configuration import Configuration
from sizing.search.pareto import pareto_axis, pareto_front
from sizing.search.space import GPUS_PER_NODE, candidates, gpu_counts
from sizing.search.tradeoffs import reasons, why_text
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
    "DIMM-DDR5-16GB": 50,
    "DIMM-DDR5-32GB": 100,
    "DIMM-DDR5-48GB": 200,
    "DIMM-DDR5-64GB": 300,
    "DIMM-DDR5-96GB": 400,
    "DIMM-DDR5-128GB": 500,
    "DIMM-DDR5-256GB": 600,
}


def test_cheapest_known_by_hand() -> None:
    # Seed workload (docs/sizing.md): 500 conversations of 1 GiB, a 500 GiB ≈ 537 GB tier.
    # 2 × RTX PRO 6000 SE (96 GB each): host need max(2 × 192, 537 + 192) = 729 GB →
    # 24 × 32 GB = 768 GB (docs/sizing.md §4 rule) → 2 × 1000 + 24 × 100 = 4,400.
    # The smallest layout that meets the baseline of 2 × 192 = 384 GB is 24 × 16 GB: a
    # CPU tier of 384 - 192 = 192 GB (179 GiB, 36 % of the users) for 2,000 + 24 × 50
    # = 3,200; at the default TTFT target the hit-rate model lets it serve (its TTFT
    # p95 stays below the target), so it is the cheapest.
    # 3 × RTX: at least 3,000 + 24 × 100 (768 GB ≥ 2 × 288): above both.
    rec = recommend(
        SEED,
        gpu_slugs=["rtx-pro-6000-se", "h200-nvl"],
        price=table_price(TOY),  # type: ignore[arg-type]
        gpus_per_node=(2, 3),
        top=5,
    )
    prices = [
        (c.price, c.plan.request.workload.gpu, c.plan.request.workload.gpus_per_node)
        for c in rec.cheapest
    ]
    # NVMe drives and shared storage cost 0 here, so with and without the NVMe tier and
    # with and without the shared tier tie at 3,200 (NVMe and shared-tier hits are timed
    # from their read rates, sizing/serving/tier_reads.py, so each meets the target); with
    # the NVMe tier, which keeps the 188 conversations the cut CPU tier leaves out, a
    # shared tier would take no returns and is not sold (sizing/serving/serve.py): three.
    assert prices == [(3200, "rtx-pro-6000-se", 2)] * 3 + [(4400, "rtx-pro-6000-se", 2)] * 2
    first, full = rec.cheapest[0], rec.cheapest[3]  # both with the NVMe tier
    assert first.nvme_tb == full.nvme_tb > 0
    assert (first.plan.host.dimm_count, first.plan.host.dimm_gb) == (24, 16)
    assert first.plan.request.workload.max_host_memory_gb == 384
    assert round(first.plan.cpu_tier.total_gb) == 192
    assert (full.plan.host.dimm_count, full.plan.host.dimm_gb) == (24, 32)
    assert full.cpu_hit_rate is not None and first.cpu_hit_rate is not None
    assert first.cpu_hit_rate < full.cpu_hit_rate  # less DRAM, fewer hits
    assert first.ttft_p95_ms is not None and full.ttft_p95_ms is not None
    assert first.ttft_p95_ms > full.ttft_p95_ms
    # Reference: the requested 4 × RTX with 24 × 48 GB (seed layout) = 4,000 + 4,800.
    assert rec.reference is not None and rec.reference.price == 8800
    codes = [r.code for r in reasons(first, rec)]
    assert codes[:2] == ["cheapest", "below_reference_by"]
    # 3,200 against 8,800: (8,800 - 3,200) / 8,800 = 63.6 %, to the nearest: 64 %.
    assert "64 % below the requested layout (4 × NVIDIA RTX PRO 6000" in why_text(first, rec)
    # 384 GB less the 192 GB reserve = 192 GB = 178.81 GiB, read rounded down as vLLM is
    # given it (178 conversations of 1 GiB, --kv-offloading-size 178).
    assert "a CPU tier of 178 GiB" in why_text(first, rec)
    assert "a CPU tier of 500 GiB" in why_text(full, rec)


def test_gpu_price_changes_the_answer() -> None:
    # With H200 NVL at 0, 2 × H200 NVL (2 × 141 GB: baseline 564 GB) with 24 × 32 GB =
    # 768 GB at 100 each costs 2,400 (a CPU tier of 768 - 282 = 486 GB, capped below the
    # users' 537 GB), against 2 × RTX's cheapest 2,000 + 24 × 16 GB × 50 = 3,200: the
    # free H200 wins.
    cheap_h200 = {**TOY, "GPU-H200-NVL": 0}
    rec = recommend(
        SEED,
        gpu_slugs=["rtx-pro-6000-se", "h200-nvl"],
        price=table_price(cheap_h200),  # type: ignore[arg-type]
        gpus_per_node=(2,),
    )
    first = rec.cheapest[0]
    assert (first.plan.request.workload.gpu, first.price) == ("h200-nvl", 2400)
    assert (first.plan.host.dimm_count, first.plan.host.dimm_gb) == (24, 32)
    # At the RTX's price (1,000 each) the H200 NVL's 24 × 32 GB layout costs 2,000 + 2,400
    # = 4,400 against the RTX's 3,200: the RTX wins again.
    rec = recommend(
        SEED,
        gpu_slugs=["rtx-pro-6000-se", "h200-nvl"],
        price=table_price({**TOY, "GPU-H200-NVL": 1000}),  # type: ignore[arg-type]
        gpus_per_node=(2,),
    )
    assert (rec.cheapest[0].plan.request.workload.gpu, rec.cheapest[0].price) == (
        "rtx-pro-6000-se",
        3200,
    )


def test_unpriced_parts_are_left_out() -> None:
    def price(bom: Bom) -> int | None:
        return None if any(ln.sku == "GPU-H200-NVL" for ln in bom.lines) else 1

    rec = recommend(SEED, gpu_slugs=["rtx-pro-6000-se", "h200-nvl"], price=price)
    assert rec.unpriced == ("h200-nvl",)
    assert {c.plan.request.workload.gpu for c in rec.feasible} == {"rtx-pro-6000-se"}


def test_nothing_fits_names_the_binding_limit() -> None:
    # 1,000,000 users at 32K: their busy hour needs more than 512 nodes of any size
    # (at 8K it already takes 244 nodes of 8 × RTX PRO 6000 SE; sizing.serving.serve).
    big = plan_request(model=QWEN, context_tokens=32768, users=1_000_000)
    rec = recommend(big, gpu_slugs=["rtx-pro-6000-se"], price=table_price(TOY))  # type: ignore[arg-type]
    assert rec.cheapest == () and rec.pareto == () and rec.feasible == ()
    assert rec.binding == "nodes"
    assert rec.nearest is None


def test_missed_target_names_the_nearest_configuration() -> None:
    # All 2,000 users active at once must be resident on the GPUs (active_share 1).
    # 8 × RTX PRO 6000 SE hold 8 × 51 = 408 (docs/sizing.md §3): nothing reaches 2,000.
    busy = plan_request(model=QWEN, context_tokens=8192, users=2000, active_share=1.0)
    rec = recommend(busy, gpu_slugs=["rtx-pro-6000-se"], price=table_price(TOY))  # type: ignore[arg-type]
    assert rec.cheapest == ()
    assert rec.binding == "GPU capacity for active users"
    assert rec.nearest is not None
    # The nearest spreads the weights widest: 8 × RTX at TP 8 hold 79 conversations per
    # card (4.3 GB of weights each instead of 34 GB at TP 1, sizing.plan.layout_choice), and the
    # load
    # takes two such nodes: 2 × 8 × 79 = 1,264 of the 2,000.
    assert rec.nearest.plan.request.workload.gpus_per_node == 8
    assert rec.nearest.plan.parallelism.tensor_parallel_size == 8
    assert rec.nearest.resident_conversations == 1264
    short = min(m.shortfall for c in rec.feasible for m in c.misses)
    assert rec.nearest.misses[0].shortfall == short


def test_pareto_front_is_not_dominated() -> None:
    rec = recommend(SEED, gpu_slugs=["rtx-pro-6000-se", "h200-nvl", "l40s"], price=table_price(TOY))  # type: ignore[arg-type]
    assert pareto_axis(rec.pareto) == "ttft_p95_ms"
    ok = [c for c in rec.feasible if c.meets_targets]
    for a in rec.pareto:
        for b in ok:
            assert not (
                b.price <= a.price
                and (b.ttft_p95_ms or 0) <= (a.ttft_p95_ms or 0)
                and (b.price, b.ttft_p95_ms) != (a.price, a.ttft_p95_ms)
            )


SLUGS = ["rtx-pro-6000-se", "rtx-pro-6000-ws", "h200-nvl", "l40s", "a100-pcie-80gb", "h200-sxm"]
MODELS = ["Qwen/Qwen3-32B-FP8", "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-70B-Instruct"]


def _violations(config: Configuration[int], request: PlanRequest, slugs: list[str]) -> list[str]:
    """Hard constraints checked from the configuration's own plan, re-made from scratch."""
    r = config.plan.request
    plan = make_plan(r)  # raises if the request does not fit
    bill_of_materials(plan)  # raises if the parts exceed the chassis
    chassis = BASEBOARD_CHASSIS if on_baseboard(r.workload.gpu) else PCIE_CHASSIS
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
    board = catalog.gpu(r.workload.gpu).baseboard_gpus
    if board and r.workload.gpus_per_node not in board:
        out.append("GPU count the baseboard does not come with")
    limit = r.workload.max_host_memory_gb
    if limit is not None and plan.host.total_gb > limit:
        out.append("host memory above the layout searched")
    if r.workload.without_shared_tier and config.shared_tier_tb > 0:
        out.append("a shared tier where none was searched")
    if r.workload.without_nvme_tier and config.nvme_tb > 0:
        out.append("an NVMe tier where none was searched")
    if r.workload.new_conversations_per_day != request.workload.new_conversations_per_day:
        out.append("new conversations per day other than the customer's")
    tp = r.workload.tensor_parallel_size
    if tp is not None and plan.parallelism.tensor_parallel_size != tp:
        out.append("TP other than the one searched")
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
        if rec.relaxed is None:
            assert config.meets_targets
        else:
            # No configuration can meet a target: each listed one meets the one relaxed
            # target searched for all (sizing/search/nearest.py, relaxed_targets).
            assert config.ttft_p95_ms is not None and config.tpot_ms is not None
            assert config.ttft_p95_ms <= (rec.relaxed.ttft_p95_ms or request.traffic.ttft_p95_ms)
            assert config.tpot_ms <= (rec.relaxed.tpot_ms or request.traffic.tpot_ms)
    assert [c.price for c in rec.cheapest] == sorted(c.price for c in rec.cheapest)
    if not rec.cheapest or rec.relaxed is not None:
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
    # The whole space: base configurations and, recursively, every variant (TP sizes,
    # DIMM layouts, no shared tier), sized without any bound.
    every = exhaustive(request, slugs, price)  # type: ignore[arg-type]
    sized = [c for c in every if c.meets_targets]
    prices = sorted(c.price for c in sized)
    assert [c.price for c in rec.cheapest] == prices[:3]
    cap = max(prices[0] * FRONT_PRICE_FACTOR, prices[2])
    front = pareto_front([c for c in sized if c.price <= cap])
    assert [(c.price, c.resident_conversations) for c in rec.pareto] == [
        (c.price, c.resident_conversations) for c in front
    ]
    # The counterfactual without a tier is the same space searched with without_cpu_tier
    # (SearchResult.without_tier): its GPUs are planned for the targets alone, so a card
    # that meets them only with a tier in the space above is sized larger there.
    bare = replace(request, workload=request.workload.replace(without_cpu_tier=True))
    no_tier = [c.price for c in exhaustive(bare, slugs, price) if c.meets_targets]  # type: ignore[arg-type]
    tier = [c.price for c in sized if c.has_cpu_tier and c.price <= cap]
    with_tier, without = rec.dram_trade
    assert (without.price if without else None) == (min(no_tier) if no_tier else None)
    assert (with_tier.price if with_tier else None) == (min(tier) if tier else None)
    assert rec.evaluated <= rec.considered


def test_search_cost_grows_linearly_with_gpu_types() -> None:
    # Plans made (a count, not a time): with more GPU types the price cap only falls, so
    # every type is sized at most as far as when it is searched alone, and the space of
    # each type is bounded by a constant (sizing/search/space.py): 7 counts × 2 NVMe
    # options for the base configurations, each with at most 3 larger TP sizes, the
    # chassis' 7 DIMM layouts below its own and a shared-tier twin.
    request = plan_request(
        model=QWEN, context_tokens=8192, users=500, new_conversations_per_day=2000
    )
    slugs = ["rtx-pro-6000-se", "h200-nvl", "l40s", "b200", "a100-pcie-80gb", "h100-nvl"]
    price = table_price({**TOY, "GPU-L40S": 700, "GPU-B200": 9000, "GPU-A100-PCIE-80GB": 1500})
    alone = {
        slug: recommend(request, gpu_slugs=[slug], price=price).evaluated - 1  # type: ignore[arg-type]
        for slug in slugs
    }
    per_type_bound = 7 * 2 * (1 + 3) * (1 + 7) * 2
    for n in range(1, len(slugs) + 1):
        together = recommend(request, gpu_slugs=slugs[:n], price=price)  # type: ignore[arg-type]
        assert together.evaluated - 1 <= sum(alone[s] for s in slugs[:n])
        assert together.considered - 1 <= n * per_type_bound


def test_module_gpus_come_in_their_baseboard_counts() -> None:
    # hardware.json baseboard_gpus: HGX H200 as 4 or 8 GPUs ('HGX 4/8-GPU' in the hardware
    # facts), HGX B200 and AMD's UBB as 8 only; PCIe cards any count up to the 8 slots.
    assert gpu_counts("h200-sxm", GPUS_PER_NODE) == (4, 8)
    assert gpu_counts("b200", GPUS_PER_NODE) == (8,)
    assert gpu_counts("mi300x", GPUS_PER_NODE) == (8,)
    assert gpu_counts("h200-nvl", GPUS_PER_NODE) == GPUS_PER_NODE
    request = plan_request(model=QWEN, context_tokens=8192, users=500)
    counts = {c.workload.gpus_per_node for c in candidates(request, ["h200-sxm", "b200"])}
    assert counts == {4, 8}


def test_ttft_difference_is_that_of_the_figures_shown() -> None:
    # Seed workload with the toy prices: the cheapest 2 × RTX PRO 6000 with 24 × 16 GB
    # has a TTFT p95 of about 319.1 ms and a dearer one about 280.5 ms; the page shows
    # "319 ms" and "281 ms" (the ``serving`` reasons), so the "faster" reason says 38,
    # the difference of the shown figures, not round(38.6) = 39.
    rec = recommend(
        SEED,
        gpu_slugs=["rtx-pro-6000-se", "h200-nvl"],
        price=table_price(TOY),  # type: ignore[arg-type]
        gpus_per_node=(2, 3, 4),
        top=5,
    )

    def figures(config: Configuration[int]) -> dict[str, dict[str, object]]:
        return {r.code: dict(r.figures) for r in reasons(config, rec)}

    shown = figures(rec.cheapest[0])["serving"]["ttft_ms"]
    faster = []
    for config in (*rec.cheapest, *rec.pareto):
        found = figures(config)
        # A gain that counts NVMe or shared-tier reloads says they have no measured basis
        # (sizing/serving/tier_reads.py): those reasons come with it.
        unmeasured = "nvme_hits" in found or "shared_hits" in found
        code = "faster_unmeasured" if unmeasured else "faster"
        assert ({"faster", "faster_unmeasured"} & set(found)) <= {code}
        if code in found:
            faster.append((found[code]["less_ms"], found["serving"]["ttft_ms"]))
    assert faster, "no configuration faster than the cheapest"
    for less_ms, ttft_ms in faster:
        assert less_ms == shown - ttft_ms  # type: ignore[operator]


def test_each_tier_is_credited_with_the_conversations_it_holds() -> None:
    # The toy search of test_cheapest_known_by_hand: its three cheapest at 3,200 are the
    # 24 × 16 GB layout (a CPU tier cut to 178 conversations of 1 GiB) with the NVMe tier,
    # and without it with and without the shared tier. Each reason's counts are the
    # plan's own placement (sizing/memory/residency.py): on the GPUs, in the CPU tier, then
    # on the NVMe tier, in the shared tier or recomputed, and the NVMe tier's
    # 2,000 - 500 = 1,500 earlier conversations of the day.
    rec = recommend(
        SEED,
        gpu_slugs=["rtx-pro-6000-se"],
        price=table_price(TOY),  # type: ignore[arg-type]
        gpus_per_node=(2,),
        top=3,
    )
    seen = set()
    for config in rec.cheapest:
        where = config.plan.placement
        figures = {r.code: r.figures for r in reasons(config, rec)}
        text = why_text(config, rec)
        if config.shared_tier_tb:
            tier = figures["tier_shared"]
            assert (tier["kept"], tier["shared"]) == (where.in_cpu_tier, where.in_shared_tier)
            assert tier["on_gpus"] + tier["kept"] + tier["shared"] == 500
            assert f"holds the other {where.in_shared_tier:,}" in text
        elif where.in_nvme_tier:
            tier = figures["tier_capped_nvme"]
            assert (tier["kept"], tier["on_nvme"]) == (where.in_cpu_tier, where.in_nvme_tier)
            assert tier["on_gpus"] + tier["kept"] + tier["on_nvme"] == 500
            assert f"the NVMe tier keeps the other {where.in_nvme_tier:,}" in text
        else:
            tier = figures["tier_capped"]
            assert tier["on_gpus"] + tier["kept"] + tier["recomputed"] == 500
        if config.plan.nvme.drive is not None:
            assert figures["nvme_earlier"]["earlier"] == where.on_nvme == 1500
        # The returns the NVMe and the shared tier serve, in the plan's own shares.
        hits = config.serving.hits
        for code, share in (("nvme_hits", hits.nvme), ("shared_hits", hits.shared)):
            if round(share * 100) >= 1:
                assert figures[code]["hit_pct"] == round(share * 100, 1)
            else:
                assert code not in figures
        seen.add((bool(config.shared_tier_tb), config.plan.nvme.drive is not None))
    assert seen == {(False, False), (True, False), (False, True)}


def test_nvme_off_configurations_keep_the_customers_new_conversations() -> None:
    # The seed's 2,000 new conversations a day (docs/sizing.md): every layout is tried with the
    # NVMe tier and without it, by the switch, never by another traffic figure.
    tried = candidates(SEED, ["rtx-pro-6000-se"])
    assert {c.workload.new_conversations_per_day for c in tried} == {2000}
    assert [c.workload.without_nvme_tier for c in tried[:2]] == [False, True]
    # A customer who turns the tier off gets no NVMe-on layout back.
    off = replace(SEED, workload=SEED.workload.replace(without_nvme_tier=True))
    assert {c.workload.without_nvme_tier for c in candidates(off, ["rtx-pro-6000-se"])} == {True}
