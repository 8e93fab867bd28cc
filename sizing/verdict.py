"""Does offloading pay off here, and if not, why.

Offloading pays when conversations rest between turns that the GPUs cannot hold and a
reload beats a recompute. It does not pay for single-turn traffic, for short prompts
whose prefill is cheaper than a reload, or when every conversation already fits in GPU
memory (sizing article; docs/sizing.md §7; NVIDIA's KVBM overview: offloading is "most
effective when the KV cache exceeds GPU memory and cache reuse outweighs the cost of
the transfer").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Note:
    """One reason or warning as a code with its numbers, so that a page can word it in
    the reader's language; :attr:`text` is the English sentence.

    Attributes:
        code: one of the keys of :data:`ENGLISH`.
        values: the numbers the sentence quotes, by name.
    """

    code: str
    values: tuple[tuple[str, int | float | str], ...] = ()

    @property
    def text(self) -> str:
        """The English sentence, in the singular where its count is one."""
        values = dict(self.values)
        singular = ENGLISH_ONE.get(self.code)
        if singular is not None and math.floor(float(values[singular[0]]) + 0.5) == 1:
            return singular[1].format(**values)
        return ENGLISH[self.code].format(**values)


ENGLISH = {
    "all_fit": "All {users:,} conversations fit in GPU memory (room for {on_gpus:,}): a CPU "
    "tier would only mirror what the GPUs already hold.",
    "resting": "{resting:,} of {users:,} conversations do not fit on the GPUs and rest between "
    "turns; without a tier each returning user pays a full prefill again.",
    "reload_not_faster": "From the CPU tier a returning user's first token takes "
    "{reload_ms:.0f} ms, no sooner than a full prefill ({recompute_ms:.0f} ms): prompts this "
    "short are cheap to recompute.",
    "no_measured_basis": "No measured basis for prefill on {gpu}: the plan cannot say what a "
    "reload saves against a recompute, so the verdict rests on memory alone.",
    "reload_faster": "From the CPU tier a returning user's first token comes after about "
    "{reload_ms:,.0f} ms against about {recompute_ms:,.0f} ms for a full prefill.",
    "active": "{active:,} users are active at once but the GPUs hold {on_gpus:,} full-length "
    "conversations: the GPU capacity for active users binds, and the others wait for a "
    "free slot. {fixes} would fix it.",
    "mirror": "The CPU tier per instance is not larger than the instance's GPU cache: it only "
    "mirrors the GPU and adds no hits. More users per instance or fewer GPUs per instance "
    "would fix it.",
    "nvme_capped": "A day of new conversations needs {needed_tb:,.1f} TB of NVMe, but the "
    "chassis's {drives} bays hold {capacity_tb:,.1f} TB: the tier keeps the most recent part "
    "of the day. A shared NAS or S3 tier would hold the rest.",
    "nvme": "The NVMe drives reach their rated endurance in about {months:.0f} months at this "
    "write volume: choose mixed-use (3 DWPD) drives or more capacity.",
    "nvme_worn": "The NVMe drives reach their rated endurance in about {months:.0f} months at "
    "this write volume, though the {drives} × {drive} are already rated for {dwpd:g} DWPD, "
    "the most of any drive offered: a shared NAS or S3 tier in place of NVMe, or fewer new "
    "conversations a day, would fix it.",
    "tier_capped": "The host memory of a node keeps {kept:,} of the {resting:,} resting "
    "conversations in the CPU tier; the other {recomputed:,} are prefilled again when their "
    "users return.",
    "no_experts": "{model} has no routed experts: expert parallel applies to "
    "mixture-of-experts models only, so the plan is sized without it.",
    "single_turn": "Every conversation has one turn: nobody returns, so a tier has nothing "
    "to reload.",
    "recompute_cheap": "A returning prompt reloads from the CPU tier in about {hit_ms:,} ms "
    "against {miss_ms:,} ms to recompute it: prompts this short are about as cheap to "
    "recompute.",
    "pool_one_request": "A replica's GPU pool holds {per_replica:,} max-length "
    "conversations at this load: reloads cannot raise the batch.",
    "few_tier_hits": "Only {tier_pct:g} % of returns would hit a tier beside the GPU "
    "({gpu_pct:g} % already hit the GPU): a tier would rarely be read.",
    "tier_hits": "{cpu_pct:g} % of returns hit the CPU tier ({gpu_pct:g} % the GPU, "
    "{nvme_pct:g} % NVMe, {shared_pct:g} % the shared tier, {miss_pct:g} % miss); TTFT p95 "
    "{ttft_ms:,} ms instead of {ttft_no_tier_ms:,} ms on the same GPUs without the tier, "
    "{gain_ms:,} ms ({gain_pct:g} %) less.",
    "tier_hits_overloaded": "{cpu_pct:g} % of returns hit the CPU tier ({gpu_pct:g} % the "
    "GPU, {nvme_pct:g} % NVMe, {shared_pct:g} % the shared tier, {miss_pct:g} % miss); "
    "TTFT p95 {ttft_s:g} s, where the same GPUs without the tier could not keep up.",
    "target_relaxed": "Even without any load the {target} at this context is {floor_ms:,} ms "
    "(hits and full prefills as the plan expects them); no number of GPUs brings the "
    "{target} within 1.5 times that, so the plan is sized for {used_ms:,} ms and misses "
    "the {target} target of {target_ms:,} ms.",
    "without_cpu_tier": "Sized without a CPU-memory tier, as asked: the GPUs are those the "
    "targets need without offloading, and returning users whose conversation is not on "
    "them are recomputed.",
    "traffic_unmeasured": "{what}: the GPUs are sized for memory only, without TTFT, TPOT "
    "or hit rates under load.",
    "gpus_saved": "Without the tier the same TTFT p95 would take {gpus:,} more GPUs.",
    "no_tier_unreachable": "Without the tier no plan within the node limit reaches the same "
    "TTFT p95.",
}

"""English wording of each note code."""

ENGLISH_ONE = {
    "pool_one_request": (
        "per_replica",
        "A replica's GPU pool holds {per_replica:,} max-length conversation at this load: "
        "reloads cannot raise the batch.",
    ),
    "nvme": (
        "months",
        "The NVMe drives reach their rated endurance in about {months:.0f} month at this "
        "write volume: choose mixed-use (3 DWPD) drives or more capacity.",
    ),
    "nvme_worn": (
        "months",
        "The NVMe drives reach their rated endurance in about {months:.0f} month at this "
        "write volume, though the {drives} × {drive} are already rated for {dwpd:g} DWPD, "
        "the most of any drive offered: a shared NAS or S3 tier in place of NVMe, or fewer "
        "new conversations a day, would fix it.",
    ),
}
"""Sentences of :data:`ENGLISH` whose count (the value named first) can be one: the
singular wording, used when that count, rounded half up as the sentence shows it, is 1."""


@dataclass(frozen=True)
class Verdict:
    """The plan's answer to "should we sell an offload tier?".

    Attributes:
        offload_pays: True when a CPU tier should be sold.
        reason_notes: why, as codes with their numbers.
        warning_notes: constraints that bind or come close, each with what would fix it.
        binding: the names of the constraints that bind (:data:`BINDING`).
    """

    offload_pays: bool
    reason_notes: tuple[Note, ...]
    warning_notes: tuple[Note, ...]
    binding: tuple[str, ...] = ()

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why, in plain English sentences."""
        return tuple(n.text for n in self.reason_notes)

    @property
    def warnings(self) -> tuple[str, ...]:
        """The warnings, in plain English sentences."""
        return tuple(n.text for n in self.warning_notes)


BINDING = {
    "active": "GPU capacity for active users",
    "mirror": "CPU tier not larger than the GPU cache",
    "nvme": "NVMe endurance",
    "nvme_capped": "NVMe bays per node",
    "tier_capped": "host memory per node",
}
"""Names of the constraints a plan can run into without being infeasible."""


def decide(
    *,
    users: int,
    conversations_on_gpus: int,
    reload_ms: float | None,
    recompute_ms: float | None,
    tier_exceeds_gpu_cache: bool,
    nvme_lifetime_years: float | None,
    nvme_top_rated: tuple[int, str, float] | None = None,
    active_users: int | None = None,
    kv_cache_is_fp8: bool = False,
    nvme_capped_at: tuple[int, float, float] | None = None,
    unmeasured_gpu: str = "",
) -> Verdict:
    """Decide whether the offload tier pays off.

    Args:
        users: conversations to keep warm.
        conversations_on_gpus: full-length conversations the GPUs hold.
        reload_ms: a returning user's TTFT from the CPU tier, ms (``None`` without a
            measured basis, :mod:`sizing.performance.hit_value`).
        recompute_ms: the TTFT of a full prefill, ms (``None`` likewise).
        tier_exceeds_gpu_cache: whether each instance's tier is larger than its GPU cache.
        nvme_lifetime_years: years until the NVMe drives wear out, or ``None``.
        nvme_top_rated: ``(drives, drive model, DWPD)`` when the drives are already rated
            for the most writes of any drive offered
            (:attr:`sizing.memory.nvme.NvmeTier.top_rated_drives`): a worn tier is then not fixed
            by other drives but by a shared tier or fewer new conversations.
        active_users: users active at the same moment (``None``: not given, no check); their
            conversations must be resident on the GPUs, since a conversation is
            reloaded to the GPU before it is served (seed: resting conversations wait
            in the CPU tier between turns, not while they run).
        kv_cache_is_fp8: whether the plan already uses an FP8 cache (then it is not
            offered as a fix).
        nvme_capped_at: ``(drives, capacity_tb, needed_tb)`` when the chassis's NVMe bays
            cap the tier below a day of conversations, else ``None``.
        unmeasured_gpu: the card's name when no measurement covers its prefill (the
            timing comparison is then left out and the reason says so).
    """
    reasons: list[Note] = []
    warnings: list[Note] = []
    binding: list[str] = []
    resting = max(0, users - conversations_on_gpus)
    pays = True
    if resting == 0:
        pays = False
        reasons.append(Note("all_fit", (("users", users), ("on_gpus", conversations_on_gpus))))
    else:
        reasons.append(Note("resting", (("resting", resting), ("users", users))))
    if reload_ms is None or recompute_ms is None:
        reasons.append(Note("no_measured_basis", (("gpu", unmeasured_gpu or "this GPU"),)))
    elif reload_ms >= recompute_ms:
        pays = False
        timing = (("reload_ms", reload_ms), ("recompute_ms", recompute_ms))
        reasons.append(Note("reload_not_faster", timing))
    elif resting:
        timing = (("reload_ms", reload_ms), ("recompute_ms", recompute_ms))
        reasons.append(Note("reload_faster", timing))
    if active_users is not None and active_users > conversations_on_gpus:
        binding.append(BINDING["active"])
        fixes = (
            "More GPUs or a shorter context"
            if kv_cache_is_fp8
            else ("More GPUs, an FP8 KV cache or a shorter context")
        )
        warnings.append(
            Note(
                "active",
                (("active", active_users), ("on_gpus", conversations_on_gpus), ("fixes", fixes)),
            )
        )
    if pays and not tier_exceeds_gpu_cache:
        binding.append(BINDING["mirror"])
        warnings.append(Note("mirror"))
    if nvme_capped_at is not None:
        drives, capacity_tb, needed_tb = nvme_capped_at
        binding.append(BINDING["nvme_capped"])
        warnings.append(
            Note(
                "nvme_capped",
                (("drives", drives), ("capacity_tb", capacity_tb), ("needed_tb", needed_tb)),
            )
        )
    if nvme_lifetime_years is not None and nvme_lifetime_years < 5:
        binding.append(BINDING["nvme"])
        months = (("months", nvme_lifetime_years * 12),)
        if nvme_top_rated is None:
            warnings.append(Note("nvme", months))
        else:
            drives, drive, dwpd = nvme_top_rated
            top = (("drives", drives), ("drive", drive), ("dwpd", dwpd))
            warnings.append(Note("nvme_worn", months + top))
    return Verdict(pays, tuple(reasons), tuple(warnings), tuple(binding))


def with_capped_tier(verdict: Verdict, *, kept: int, resting: int, recomputed: int) -> Verdict:
    """``verdict`` with the warning that a node's host memory (the customer's limit, or
    the chassis's DIMM slots below it) keeps only ``kept`` of the ``resting``
    conversations in the CPU tier and ``recomputed`` are prefilled again.

    For a plan without the traffic model (no measured prefill basis), whose verdict has no
    hit rates to show the misses: the counts are :attr:`sizing.plan.orchestrator.Plan.placement`'s
    (rule: :mod:`sizing.memory.residency`, a tier cut by a host-memory limit)."""
    note = Note("tier_capped", (("kept", kept), ("resting", resting), ("recomputed", recomputed)))
    return with_warning(verdict, note, BINDING["tier_capped"])


def with_warning(verdict: Verdict, note: Note, binding: str = "") -> Verdict:
    """``verdict`` with the warning ``note`` added and, when given, the constraint
    ``binding`` (a value of :data:`BINDING`) among those that bind."""
    return replace(
        verdict,
        warning_notes=(*verdict.warning_notes, note),
        binding=(*verdict.binding, binding) if binding else verdict.binding,
    )


ON_GPUS_NOTES = ("all_fit",)
"""Reasons that quote the GPUs' room in conversations (their ``on_gpus`` value)."""


def restated(verdict: Verdict, conversations_on_gpus: int) -> Verdict:
    """``verdict`` with the GPUs' room restated as ``conversations_on_gpus``: a plan that
    sells no tier is sized again on the GPUs its targets need without one
    (:func:`sizing.plan.orchestrator.make_plan`), and its sentences then quote that plan's room, the
    summary's ``conversations_on_gpus``, not the room of the plan with the tier."""

    def one(note: Note) -> Note:
        if note.code not in ON_GPUS_NOTES:
            return note
        values = tuple((k, conversations_on_gpus if k == "on_gpus" else v) for k, v in note.values)
        return replace(note, values=values)

    return replace(
        verdict,
        reason_notes=tuple(one(n) for n in verdict.reason_notes),
        warning_notes=tuple(one(n) for n in verdict.warning_notes),
    )
