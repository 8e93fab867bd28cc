"""The English sentence of every verdict note, and the filters each of its values passes.

One :class:`Sentence` per note code (a key of :data:`sizing.verdict.ENGLISH`), worded in
the active language by ``{% note_sentence note %}``
(:mod:`configurator.inquiries.templatetags.note_sentences`); the German is in
``configurator/locale``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib.humanize.templatetags.humanize import intcomma
from django.template.defaultfilters import default, floatformat

Filter = tuple[Callable[..., Any], tuple[Any, ...]]
"""A template filter and its arguments, as ``value|filter:arg`` applies it."""

_INTCOMMA: Filter = (intcomma, ())
_WHOLE: Filter = (floatformat, ("0g",))
_TENTHS: Filter = (floatformat, ("1g",))
_ONE_PLACE: Filter = (floatformat, ("-1g",))
_TWO_PLACES: Filter = (floatformat, ("-2g",))
_ZERO: Filter = (default, (0,))


@dataclass(frozen=True)
class Sentence:
    """One note's sentence.

    Attributes:
        singular: the English message (the msgid), ``%(name)s`` for each value.
        plural: the plural message, or empty for a sentence without one.
        count: ``(name, key)``: the note value ``key`` picks the plural form and fills
            ``%(name)s``; empty without a plural.
        values: ``name: (key, filters)``: ``%(name)s`` is the note value ``key``
            through ``filters``.
    """

    singular: str
    plural: str = ""
    count: tuple[str, str] = ("", "")
    values: Mapping[str, tuple[str, tuple[Filter, ...]]] = field(default_factory=dict)


SENTENCES: dict[str, Sentence] = {
    "all_fit": Sentence(
        (
            "All %(users)s conversations fit in GPU memory (room for %(on_gpus)s): a CPU tier "
            "would only mirror what the GPUs already hold."
        ),
        values={"users": ("users", (_INTCOMMA,)), "on_gpus": ("on_gpus", (_INTCOMMA,))},
    ),
    "resting": Sentence(
        (
            "%(resting)s of %(users)s conversations do not fit on the GPUs and rest between "
            "turns; without a tier each returning user pays a full prefill again."
        ),
        values={"resting": ("resting", (_INTCOMMA,)), "users": ("users", (_INTCOMMA,))},
    ),
    "reload_not_faster": Sentence(
        (
            "From the CPU tier a returning user's first token takes %(reload)s ms, no sooner than"
            " a full prefill (%(recompute)s ms): prompts this short are cheap to recompute."
        ),
        values={"reload": ("reload_ms", (_WHOLE,)), "recompute": ("recompute_ms", (_WHOLE,))},
    ),
    "reload_faster": Sentence(
        (
            "From the CPU tier a returning user's first token comes after about %(reload)s ms "
            "against about %(recompute)s ms for a full prefill."
        ),
        values={"reload": ("reload_ms", (_WHOLE,)), "recompute": ("recompute_ms", (_WHOLE,))},
    ),
    "no_measured_basis": Sentence(
        (
            "No measured basis for prefill on %(gpu)s: the plan cannot say what a reload saves "
            "against a recompute, so the verdict rests on memory alone."
        ),
        values={"gpu": ("gpu", ())},
    ),
    "active": Sentence(
        (
            "%(active)s users are active at once but the GPUs hold %(on_gpus)s full-length "
            "conversations: the GPU capacity for active users binds, and the others wait for a "
            "free slot. %(fixes)s would fix it."
        ),
        values={
            "active": ("active", (_INTCOMMA,)),
            "on_gpus": ("on_gpus", (_INTCOMMA,)),
            "fixes": ("fixes", ()),
        },
    ),
    "mirror": Sentence(
        (
            "The CPU tier per instance is not larger than the instance's GPU cache: it only "
            "mirrors the GPU and adds no hits. More users per instance or fewer GPUs per instance"
            " would fix it."
        ),
    ),
    "nvme": Sentence(
        (
            "The NVMe drives reach their rated endurance in about %(months)s month at this write "
            "volume: choose mixed-use (3 DWPD) drives or more capacity."
        ),
        plural=(
            "The NVMe drives reach their rated endurance in about %(months)s months at this write"
            " volume: choose mixed-use (3 DWPD) drives or more capacity."
        ),
        count=("n", "months_whole"),
        values={"months": ("months", (_WHOLE,))},
    ),
    "nvme_worn": Sentence(
        (
            "The NVMe drives reach their rated endurance in about %(months)s month at this write "
            "volume, though the %(drives)s × %(drive)s are already rated for %(dwpd)s DWPD, the "
            "most of any drive offered: a shared NAS or S3 tier in place of NVMe, or fewer new "
            "conversations a day, would fix it."
        ),
        plural=(
            "The NVMe drives reach their rated endurance in about %(months)s months at this write"
            " volume, though the %(drives)s × %(drive)s are already rated for %(dwpd)s DWPD, the "
            "most of any drive offered: a shared NAS or S3 tier in place of NVMe, or fewer new "
            "conversations a day, would fix it."
        ),
        count=("n", "months_whole"),
        values={
            "months": ("months", (_WHOLE,)),
            "drives": ("drives", ()),
            "drive": ("drive", ()),
            "dwpd": ("dwpd", (_ONE_PLACE,)),
        },
    ),
    "nvme_capped": Sentence(
        (
            "A day of new conversations needs %(needed)s TB of NVMe, but the chassis's %(drives)s"
            " bays hold %(capacity)s TB: the tier keeps the most recent part of the day. A shared"
            " NAS or S3 tier would hold the rest."
        ),
        values={
            "needed": ("needed_tb", (_TENTHS,)),
            "drives": ("drives", ()),
            "capacity": ("capacity_tb", (_TENTHS,)),
        },
    ),
    "no_experts": Sentence(
        (
            "%(model)s has no routed experts: expert parallel applies to mixture-of-experts"
            " models only, so the plan is sized without it."
        ),
        values={"model": ("model", ())},
    ),
    "tier_capped": Sentence(
        (
            "The host memory of a node keeps %(kept)s of the %(resting)s resting conversations in"
            " the CPU tier; the other %(recomputed)s are prefilled again when their users return."
        ),
        values={
            "kept": ("kept", (_INTCOMMA,)),
            "resting": ("resting", (_INTCOMMA,)),
            "recomputed": ("recomputed", (_INTCOMMA,)),
        },
    ),
    "single_turn": Sentence(
        "Every conversation has one turn: nobody returns, so a tier has nothing to reload.",
    ),
    "recompute_cheap": Sentence(
        (
            "A returning prompt reloads from the CPU tier in about %(hit)s ms against %(miss)s ms"
            " to recompute it: prompts this short are about as cheap to recompute."
        ),
        values={"hit": ("hit_ms", (_INTCOMMA,)), "miss": ("miss_ms", (_INTCOMMA,))},
    ),
    "pool_one_request": Sentence(
        (
            "A replica's GPU pool holds %(per_replica)s max-length conversation at this load: "
            "reloads cannot raise the batch."
        ),
        plural=(
            "A replica's GPU pool holds %(per_replica)s max-length conversations at this load: "
            "reloads cannot raise the batch."
        ),
        count=("per_replica", "per_replica"),
    ),
    "few_tier_hits": Sentence(
        (
            "Only %(tier)s %% of returns would hit a tier beside the GPU (%(gpu)s %% already hit "
            "the GPU): a tier would rarely be read."
        ),
        values={"tier": ("tier_pct", (_ONE_PLACE,)), "gpu": ("gpu_pct", (_WHOLE,))},
    ),
    "tier_hits": Sentence(
        (
            "%(cpu)s %% of returns hit the CPU tier (%(gpu)s %% the GPU, %(nvme)s %% NVMe, "
            "%(shared)s %% the shared tier, %(miss)s %% miss); TTFT p95 %(ttft)s ms instead of "
            "%(no_tier)s ms on the same GPUs without the tier, %(gain)s ms (%(gain_pct)s %%) "
            "less."
        ),
        values={
            "cpu": ("cpu_pct", ()),
            "gpu": ("gpu_pct", ()),
            "nvme": ("nvme_pct", (_ZERO,)),
            "shared": ("shared_pct", (_ZERO,)),
            "miss": ("miss_pct", ()),
            "ttft": ("ttft_ms", (_INTCOMMA,)),
            "no_tier": ("ttft_no_tier_ms", (_INTCOMMA,)),
            "gain": ("gain_ms", (_INTCOMMA,)),
            "gain_pct": ("gain_pct", (_ONE_PLACE,)),
        },
    ),
    "tier_hits_overloaded": Sentence(
        (
            "%(cpu)s %% of returns hit the CPU tier (%(gpu)s %% the GPU, %(nvme)s %% NVMe, "
            "%(shared)s %% the shared tier, %(miss)s %% miss); TTFT p95 %(ttft)s s, where the "
            "same GPUs without the tier could not keep up."
        ),
        values={
            "cpu": ("cpu_pct", ()),
            "gpu": ("gpu_pct", ()),
            "nvme": ("nvme_pct", (_ZERO,)),
            "shared": ("shared_pct", (_ZERO,)),
            "miss": ("miss_pct", ()),
            "ttft": ("ttft_s", (_TWO_PLACES,)),
        },
    ),
    "gpus_saved": Sentence(
        "Without the tier the same TTFT p95 would take %(gpus)s more GPUs.",
        values={"gpus": ("gpus", (_INTCOMMA,))},
    ),
    "no_tier_unreachable": Sentence(
        "Without the tier no plan within the node limit reaches the same TTFT p95.",
    ),
    "target_relaxed": Sentence(
        (
            "Even without any load the %(target)s at this context is %(floor)s ms (hits and full "
            "prefills as the plan expects them); no number of GPUs brings the %(target)s within "
            "1.5 times that, so the plan is sized for %(used)s ms and misses the %(target)s "
            "target of %(wanted)s ms."
        ),
        values={
            "floor": ("floor_ms", (_INTCOMMA,)),
            "target": ("target", ()),
            "wanted": ("target_ms", (_INTCOMMA,)),
            "used": ("used_ms", (_INTCOMMA,)),
        },
    ),
    "without_cpu_tier": Sentence(
        "Sized without a CPU-memory tier, as asked: the GPUs are those the targets need "
        "without offloading, and returning users whose conversation is not on them are "
        "recomputed."
    ),
    "traffic_unmeasured": Sentence(
        (
            "%(what)s: the GPUs are sized for memory only, without TTFT, TPOT or hit rates under "
            "load."
        ),
        values={"what": ("what", ())},
    ),
}
"""The sentence of each note code (a key of :data:`sizing.verdict.ENGLISH`)."""
