"""Why a recommended configuration wins, or what it gives up, in words with numbers.

Each reason is a :class:`sizing.verdict.Note`-like code with its figures (so that a page
can word it in the reader's language) and an English sentence. The figures are the
plan's own (:mod:`sizing.plan.orchestrator`): conversations resident on the GPUs, the CPU tier, the
NVMe tier and the shared tier, each credited with the conversations that rest in it
(:attr:`sizing.plan.orchestrator.Plan.placement`). Price differences are left to the caller, which
owns the money.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sizing.search.cheapest import TPOT_TARGET, TTFT_TARGET, Recommendation
from sizing.search.configuration import Configuration, tier_gib
from sizing.units import whole_gib

ENGLISH = {
    "cheapest_relaxed": "The cheapest configuration that meets the one relaxed target, of "
    "{considered:,} ({evaluated:,} sized).",
    "cheapest": "The cheapest configuration that meets the workload, of {considered:,} "
    "({evaluated:,} sized; the others cost more in chassis, CPUs, GPUs and the smallest "
    "DIMM layout alone).",
    "below_reference": "Costs no more than the requested {ref_gpus} × {ref_gpu} with "
    "{ref_memory_gb:,} GB of host memory.",
    "below_reference_by": "{below_pct} % below the requested layout ({ref_gpus} × {ref_gpu} "
    "with {ref_memory_gb:,} GB of host memory).",
    "tier": "{on_gpus:,} conversations stay on the GPUs; a CPU tier of {tier_gib:,.0f} GiB "
    "({per_replica_gib:,.0f} GiB per replica) keeps the other {resting:,} warm, so DRAM "
    "does the work of more GPUs.",
    "tier_capped": "{on_gpus:,} conversations stay on the GPUs; a CPU tier of "
    "{tier_gib:,.0f} GiB ({per_replica_gib:,.0f} GiB per replica) keeps {kept:,} more warm, "
    "as much as the host memory holds; the other {recomputed:,} are recomputed when their "
    "users return.",
    "tier_capped_nvme": "{on_gpus:,} conversations stay on the GPUs; a CPU tier of "
    "{tier_gib:,.0f} GiB ({per_replica_gib:,.0f} GiB per replica) keeps {kept:,} more warm, "
    "as much as the host memory holds; the NVMe tier keeps the other {on_nvme:,}, reloaded "
    "instead of recomputed when their users return.",
    "tier_capped_nvme_recomputed": "{on_gpus:,} conversations stay on the GPUs; a CPU tier "
    "of {tier_gib:,.0f} GiB ({per_replica_gib:,.0f} GiB per replica) keeps {kept:,} more "
    "warm, as much as the host memory holds; the NVMe tier keeps {on_nvme:,} more, and the "
    "other {recomputed:,} are recomputed when their users return.",
    "tier_shared": "{on_gpus:,} conversations stay on the GPUs; a CPU tier of "
    "{tier_gib:,.0f} GiB ({per_replica_gib:,.0f} GiB per replica) keeps {kept:,} more warm, "
    "as much as the host memory holds; a shared tier of {shared_tb:,.1f} TB (NFS/pNFS or "
    "S3) holds the other {shared:,}, reloaded instead of recomputed when their users return.",
    "no_tier": "All {users:,} conversations fit on the GPUs ({on_gpus:,} resident): no CPU "
    "tier to buy.",
    "no_tier_recomputed": "{on_gpus:,} of {users:,} conversations stay on the GPUs; with no "
    "CPU tier the other {recomputed:,} are recomputed when their users return.",
    "nvme": "An NVMe tier of {nvme_tb:,.2f} TB holds a day of new conversations.",
    "nvme_earlier": "An NVMe tier of {nvme_tb:,.2f} TB holds a day of new conversations: "
    "{earlier:,} from earlier in the day rest only there.",
    "no_nvme": "Gives up the NVMe tier: conversations from earlier in the day are "
    "recomputed when they return.",
    "kv_16bit": "16-bit KV cache: the {gpu} has no native FP8 cache.",
    "pipeline": "The weights need {nodes} nodes (pipeline parallel {nodes}).",
    "more_resident": "{more:,} more conversations resident on the GPUs than the cheapest: "
    "fewer returning users wait for a reload.",
    "faster": "TTFT p95 {less_ms:,.0f} ms lower than the cheapest configuration's.",
    "faster_unmeasured": "TTFT p95 {less_ms:,.0f} ms lower than the cheapest "
    "configuration's, counting reloads from tiers whose read time has no measured basis "
    "(below).",
    "misses": "Misses the target '{target}': {value:,.0f} against {limit:,.0f}.",
    "misses_ms": "Misses the {target} target: {value:,.0f} ms against {limit:,.0f} ms.",
    "serving": "TTFT p95 {ttft_ms:,.0f} ms at the busiest hour against a target of "
    "{target_ms:,.0f} ms; {hit_pct:.0f} % of returning users hit the CPU tier.",
    "nvme_hits": "{hit_pct:.0f} % of returning users reload from the NVMe tier; no measured "
    "basis: its read time is timed from the drives' rated read rate.",
    "shared_hits": "{hit_pct:.0f} % of returning users reload from the shared tier; no "
    "measured basis: its read time is timed from one 100 GbE port per node.",
    "no_tier_replicas": "Without the CPU tier these GPUs would need {without:,} replicas "
    "instead of {with_tier:,} to keep this configuration's TTFT p95 of {ttft_ms:,} ms.",
    "nodes": "{nodes} nodes behind a KV-aware router carry the load.",
}
"""English wording of each reason code."""


@dataclass(frozen=True)
class Reason:
    """One reason, as a code with the figures its sentence quotes.

    Attributes:
        code: a key of :data:`ENGLISH`.
        values: the figures by name.
    """

    code: str
    values: tuple[tuple[str, int | float | str], ...] = ()

    @property
    def figures(self) -> dict[str, int | float | str]:
        """The figures by name (for a template)."""
        return dict(self.values)

    @property
    def text(self) -> str:
        """The English sentence."""
        return ENGLISH[self.code].format(**self.figures)


def _tier(config: Configuration[Any]) -> Reason:
    plan = config.plan
    if not config.has_cpu_tier:
        users = (("users", plan.request.workload.users), ("on_gpus", plan.placement.on_gpus))
        recomputed = plan.placement.recomputed
        if recomputed:
            return Reason("no_tier_recomputed", (*users, ("recomputed", recomputed)))
        return Reason("no_tier", users)
    figures: tuple[tuple[str, int | float | str], ...] = (
        ("on_gpus", config.resident_conversations),
        ("tier_gib", whole_gib(tier_gib(config))),
        ("per_replica_gib", whole_gib(plan.cpu_tier.per_instance_gib)),
    )
    where = plan.placement
    if where.in_shared_tier:
        # A cut tier's overflow rests in the shared tier the plan sells.
        shared = (
            ("kept", where.in_cpu_tier),
            ("shared", where.in_shared_tier),
            ("shared_tb", round(config.shared_tier_tb, 1)),
        )
        return Reason("tier_shared", (*figures, *shared))
    kept = (("kept", where.in_cpu_tier),)
    if where.in_nvme_tier:
        # A tier cut by the host memory: the NVMe tier keeps what its bytes hold of the rest.
        nvme = ("on_nvme", where.in_nvme_tier)
        if where.recomputed:
            rest = ("recomputed", where.recomputed)
            return Reason("tier_capped_nvme_recomputed", (*figures, *kept, nvme, rest))
        return Reason("tier_capped_nvme", (*figures, *kept, nvme))
    if where.recomputed:
        # A tier cut by the host memory keeps fewer than the resting conversations.
        return Reason("tier_capped", (*figures, *kept, ("recomputed", where.recomputed)))
    return Reason("tier", (*figures, ("resting", plan.resting_conversations)))


def _nvme(config: Configuration[Any]) -> Reason:
    """The NVMe tier, with the day's earlier conversations that rest only on it
    (``Placement.on_nvme``) when there are any."""
    tb = ("nvme_tb", round(config.nvme_tb, 2))
    earlier = config.plan.placement.on_nvme
    if earlier:
        return Reason("nvme_earlier", (tb, ("earlier", earlier)))
    return Reason("nvme", (tb,))


def below_pct(price: Any, reference_price: Any) -> int:
    """Whole percent by which ``price`` lies below ``reference_price``, rounded to the
    nearest (half up: 35.9 % is 36 %, 35.5 % is 36 %), as a reader rounds the two prices'
    difference; 0 when the reference price is not positive or the prices cannot be
    divided (a caller's own price type)."""
    try:
        share = (reference_price - price) / reference_price
    except (TypeError, ZeroDivisionError, ArithmeticError):
        return 0
    return max(0, math.floor(float(share) * 100 + 0.5 + 1e-9))


def _below_reference(config: Configuration[Any], ref: Configuration[Any]) -> Reason:
    """``below_reference_by`` with the percentage when it is 1 % or more, otherwise
    ``below_reference`` (costs no more than the requested layout)."""
    pct = below_pct(config.price, ref.price)
    figures: tuple[tuple[str, int | float | str], ...] = (
        ("ref_gpus", ref.gpus),
        ("ref_gpu", ref.plan.gpu.name),
        ("ref_memory_gb", ref.plan.host.total_gb),
    )
    if pct >= 1:
        return Reason("below_reference_by", (("below_pct", pct), *figures))
    return Reason("below_reference", figures)


def reasons(config: Configuration[Any], rec: Recommendation[Any]) -> tuple[Reason, ...]:
    """Why ``config`` is listed in ``rec``: rank, tiers, and what it gives up.

    The first reason says where it stands (cheapest, or what it buys over the cheapest on
    the front's second axis); the others describe its tiers from its plan.
    """
    out: list[Reason] = []
    cheapest = rec.cheapest[0] if rec.cheapest else None
    if config is cheapest:
        # When no configuration can meet a latency target, the cheapest meets the one
        # relaxed target the search used for all (sizing.search.nearest), not the workload.
        code = "cheapest" if rec.relaxed is None else "cheapest_relaxed"
        out.append(Reason(code, (("considered", rec.considered), ("evaluated", rec.evaluated))))
    elif cheapest is not None:
        out.extend(_against(config, cheapest))
    ref = rec.reference
    if ref is not None and config is not ref and not ref.price < config.price:
        out.append(_below_reference(config, ref))
    out.append(_tier(config))
    plan = config.plan
    request = plan.request
    if request.workload.kv_dtype != "fp8" and not plan.gpu.fp8_kv_cache:
        out.append(Reason("kv_16bit", (("gpu", plan.gpu.name),)))
    if plan.nvme.drive is not None:
        out.append(_nvme(config))
    elif _wants_nvme(config, rec):
        out.append(Reason("no_nvme"))
    if plan.parallelism.pipeline_parallel_size > 1:
        out.append(Reason("pipeline", (("nodes", plan.parallelism.nodes),)))
    elif plan.parallelism.nodes > 1:
        out.append(Reason("nodes", (("nodes", plan.parallelism.nodes),)))
    out.extend(_serving(config))
    for miss in config.misses:
        code = "misses_ms" if miss.target in (TTFT_TARGET, TPOT_TARGET) else "misses"
        out.append(
            Reason(code, (("target", miss.target), ("value", miss.value), ("limit", miss.limit)))
        )
    return tuple(out)


def _serving(config: Configuration[Any]) -> list[Reason]:
    """TTFT p95 and the CPU hit rate under traffic, the returns the NVMe and the shared
    tier serve (``serving.hits``, 1 % or more), and the replicas of the same GPUs that
    would keep this configuration's own TTFT p95 without the tier (``plan.serving``;
    nothing without one). That is a different question from the cheapest configuration
    without a tier (:attr:`sizing.search.cheapest.Recommendation.without_tier`), which only has
    to meet the target, usually well above a tiered configuration's TTFT p95, and so
    can take fewer GPUs."""
    serving = config.serving
    if serving is None or config.ttft_p95_ms is None or config.cpu_hit_rate is None:
        return []
    out = [
        Reason(
            "serving",
            (
                ("ttft_ms", round(config.ttft_p95_ms)),
                ("target_ms", round(_ttft_target_ms(config))),
                ("hit_pct", round(config.cpu_hit_rate * 100, 1)),
            ),
        )
    ]
    for code, share in _unmeasured_hits(config):
        out.append(Reason(code, (("hit_pct", round(share * 100, 1)),)))
    scale = serving.scale
    without, final = scale.no_tier_replicas, scale.final.replicas
    if config.has_cpu_tier and without is not None and without > final:
        out.append(
            Reason(
                "no_tier_replicas",
                (
                    ("without", without),
                    ("with_tier", final),
                    ("ttft_ms", round(config.ttft_p95_ms)),
                ),
            )
        )
    return out


def _unmeasured_hits(config: Configuration[Any]) -> list[tuple[str, float]]:
    """The ``nvme_hits`` and ``shared_hits`` codes with the share of returns each tier
    serves, for the tiers that serve 1 % or more (a smaller share is left unsaid). Their
    reloads are timed from the tier's read rate with no measured basis
    (:mod:`sizing.serving.tier_reads`), so a TTFT gain they bring says so."""
    if config.serving is None:
        return []
    hits = config.serving.hits
    shares = (("nvme_hits", hits.nvme), ("shared_hits", hits.shared))
    return [(code, share) for code, share in shares if round(share * 100) >= 1]


def _ttft_target_ms(config: Configuration[Any]) -> float:
    """The TTFT p95 target the configuration is held to: the customer's when it misses
    it (a nearest configuration sized for a looser one, :mod:`sizing.search.nearest`),
    else its plan's."""
    missed = [m.limit for m in config.misses if m.target == "TTFT p95"]
    return missed[0] if missed else float(config.serving.ttft_p95_target_ms)


def _wants_nvme(config: Configuration[Any], rec: Recommendation[Any]) -> bool:
    """True when the workload asked for an NVMe tier (the reference plan has new
    conversations per day) but this configuration has none."""
    ref = rec.reference
    asked = ref.plan.request.workload.nvme_conversations_per_day if ref else 0
    return bool(asked) and config.plan.request.workload.nvme_conversations_per_day == 0


def _against(config: Configuration[Any], cheapest: Configuration[Any]) -> list[Reason]:
    """What ``config`` buys over the cheapest on the front's second axis (the TTFT itself
    is in the ``serving`` reason when the plan has one). The difference is taken
    between the whole milliseconds the ``serving`` reasons show, so that it is the
    difference a reader computes from them."""
    if config.ttft_p95_ms is not None and cheapest.ttft_p95_ms is not None:
        less_ms = round(cheapest.ttft_p95_ms) - round(config.ttft_p95_ms)
        if less_ms < 1:
            return []  # not faster by a whole millisecond
        code = "faster_unmeasured" if _unmeasured_hits(config) else "faster"
        return [Reason(code, (("less_ms", less_ms),))]
    more = config.resident_conversations - cheapest.resident_conversations
    return [Reason("more_resident", (("more", more),))] if more > 0 else []


def why_text(config: Configuration[Any], rec: Recommendation[Any]) -> str:
    """The reasons as English sentences, one paragraph."""
    return " ".join(r.text for r in reasons(config, rec))
