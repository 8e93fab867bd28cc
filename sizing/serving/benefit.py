"""What the offload tier buys under the customer's traffic, and whether it pays.

The verdict comes from hit rates and TTFT, not from a count of conversations (docs/sizing.md
§10; the published points in ``offload_benefit_points.jsonl``). Offloading does not pay:

- when every conversation fits on the GPUs (seed; NVIDIA's KVBM overview: offloading
  is "most effective when the KV cache exceeds GPU memory");
- when prompts are so short that recompute costs about as much as a reload: a CPU hit
  that saves less than :data:`MIN_TTFT_SAVING` of a miss's TTFT, on the mean return
  (the vLLM connector blog's 1K-token point: ~30 ms recompute against ~15 ms reload,
  id ``vllm-blog-ttft-sweep``, is about the break-even of a tier's price);
- when the GPU pool holds about one max-length request at the offered concurrency:
  reloads cannot raise the batch (``agentic-kvc-h20-capacity-knee``: beyond the active
  working set extra tiers bought about nothing);
- when the tier is slower than recompute (``sglang-26305-minimax-m27``: a file tier
  slower than recompute; ``sglang-eic-dsv4-h20``: a remote store at 0.57 GB/s per rank);
- when almost no return would hit the tier: fewer than :data:`MIN_TIER_HITS` of the
  returns (all of them hit the GPU already, or their gaps outlast the tier).

It pays when returning users would otherwise miss. The answer names the figures: the
share of returns each tier serves, TTFT p95 with the tier against the same GPUs
without it, and the GPUs a plan without a tier needs for the same TTFT p95. The two
TTFTs are quoted in ms to the place at which they differ, with the gain in ms and
percent (:func:`ttft_comparison`), so that a GPU count bought for a small gain reads as
such.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.serving.replicas import Scale
from sizing.serving.service_times import ServiceTable
from sizing.verdict import Note, Verdict

MIN_TTFT_SAVING = 0.2
"""Least share of a miss's TTFT a CPU hit must save to be worth its DIMMs (planning
rule; see the module docstring)."""

MIN_TIER_HITS = 0.05
"""Least share of returns the offload tiers must serve (planning rule)."""

MAX_TTFT_PLACES = 3
"""Most decimal places of ms a TTFT comparison prints (:func:`ttft_comparison`): a
microsecond, below which two TTFTs count as the same."""

MIN_POOL_CONVERSATIONS = 2
"""A replica's pool must hold at least this many max-length conversations for a reload
to raise the batch (module docstring)."""


@dataclass(frozen=True)
class Benefit:
    """The offload tier's worth for this traffic.

    Attributes:
        offload_pays: True when the tier should be sold.
        notes: why, as codes with their figures (worded in :data:`sizing.verdict.ENGLISH`).
        gpus_saved: GPUs a plan without a tier needs beyond this one for the same TTFT
            p95 (``None``: not reachable without a tier within the node limit).
        mean_return_miss_ms: TTFT of the mean return on a miss, one request, ms.
        mean_return_cpu_hit_ms: the same return hitting the CPU tier, ms.
    """

    offload_pays: bool
    notes: tuple[Note, ...]
    gpus_saved: int | None
    mean_return_miss_ms: float
    mean_return_cpu_hit_ms: float


def whole_percents(shares: tuple[float, ...]) -> tuple[int, ...]:
    """``shares`` (fractions of all returns, adding to 1) as whole percents that add to
    100: each rounded down, the missing points given to the largest remainders (largest
    remainder method), so that a sentence listing every tier and the misses adds up
    (73 % the GPU, 25 % the CPU tier, 2 % NVMe, 0 % miss). Shares adding to less than 1
    keep their rounded-down sum."""
    exact = [100 * max(0.0, s) for s in shares]
    whole = [math.floor(x + 1e-9) for x in exact]
    missing = min(len(whole), max(0, round(sum(exact)) - sum(whole)))
    order = sorted(range(len(exact)), key=lambda i: whole[i] - exact[i])
    for i in order[:missing]:
        whole[i] += 1
    return tuple(whole)


def ttft_comparison(tiered_ms: float, no_tier_ms: float) -> tuple[tuple[str, int | float], ...]:
    """The values of the sentence that sets the TTFT p95 with the tier, ``tiered_ms``,
    against the same GPUs without it, ``no_tier_ms`` (both ms, finite):
    ``ttft_ms``, ``ttft_no_tier_ms``, the gain ``gain_ms`` (no-tier less tiered, as the
    two shown values give it) and ``gain_pct`` (the gain as a percent of the no-tier
    TTFT, to one place).

    The two times are in ms to the fewest places, from one (the summary's
    ``ttft_p95_ms``) to :data:`MAX_TTFT_PLACES`, at which they differ, so that two
    different times never read the same; a whole number of ms is an ``int``, so that
    it prints without a fraction.

    Raises:
        ValueError: a time is not finite (:func:`judge` then quotes the tiered TTFT
            alone).
    """
    if not (math.isfinite(tiered_ms) and math.isfinite(no_tier_ms)):
        raise ValueError("both TTFTs must be finite")
    places = next(
        (d for d in range(1, MAX_TTFT_PLACES + 1) if round(tiered_ms, d) != round(no_tier_ms, d)),
        MAX_TTFT_PLACES,
    )
    tiered, no_tier = round(tiered_ms, places), round(no_tier_ms, places)
    gain = round(no_tier - tiered, places)
    pct = round(100 * (no_tier_ms - tiered_ms) / no_tier_ms, 1) if no_tier_ms else 0.0
    return (
        ("ttft_ms", _whole_as_int(tiered)),
        ("ttft_no_tier_ms", _whole_as_int(no_tier)),
        ("gain_ms", _whole_as_int(gain)),
        ("gain_pct", pct),
    )


def _whole_as_int(value: float) -> int | float:
    """``value`` as an ``int`` when it is whole, else unchanged."""
    return int(value) if value == int(value) else value


def _mean_return_ms(table: ServiceTable) -> tuple[float, float]:
    """(miss, CPU hit) TTFT of the mean returning turn, one request, ms."""
    returns = [row for row in table.rows if row.reload_tokens]
    if not returns:
        return 0.0, 0.0
    weight = sum(r.weight for r in returns)
    miss = sum(r.weight * r.miss_ms for r in returns) / weight
    cpu = sum(r.weight * r.hit_ms[1] for r in returns) / weight
    return miss, cpu


def judge(
    *,
    scale: Scale,
    table: ServiceTable,
    users: int,
    conversations_per_replica: int,
    gpus_per_replica: int,
    turns: int,
) -> Benefit:
    """Decide whether the tier pays under this traffic, with the figures.

    Args:
        scale: the plan's replicas with and without a tier (:func:`sizing.serving.replicas.scale`).
        table: the workload's per-request times
        (:func:`sizing.serving.service_times.service_table`).
        users: all users.
        conversations_per_replica: max-length conversations one replica's pool holds.
        gpus_per_replica: GPUs of one replica.
        turns: turns per conversation (1: nobody returns).

    Source: module docstring.
    """
    final, same = scale.final, scale.no_tier_same_gpus
    hits = final.hits
    miss_ms, cpu_ms = _mean_return_ms(table)
    notes: list[Note] = []
    pays = True
    on_gpus = conversations_per_replica * final.replicas
    if turns == 1:
        pays = False
        notes.append(Note("single_turn"))
    if users <= on_gpus:
        pays = False
        notes.append(Note("all_fit", (("users", users), ("on_gpus", on_gpus))))
    if turns > 1 and cpu_ms >= (1 - MIN_TTFT_SAVING) * miss_ms:
        pays = False
        notes.append(
            Note("recompute_cheap", (("hit_ms", round(cpu_ms)), ("miss_ms", round(miss_ms))))
        )
    if conversations_per_replica < MIN_POOL_CONVERSATIONS:
        pays = False
        notes.append(Note("pool_one_request", (("per_replica", conversations_per_replica),)))
    if pays and hits.offload_tiers < MIN_TIER_HITS:
        pays = False
        notes.append(
            Note(
                "few_tier_hits",
                (
                    ("tier_pct", round(100 * hits.offload_tiers, 1)),
                    ("gpu_pct", round(100 * hits.gpu)),
                ),
            )
        )
    saved = None
    if scale.no_tier_replicas is not None:
        saved = max(0, scale.no_tier_replicas - final.replicas) * gpus_per_replica
    if pays:
        cpu_pct, gpu_pct, nvme_pct, shared_pct, miss_pct = whole_percents(
            (hits.cpu, hits.gpu, hits.nvme, hits.shared, hits.miss)
        )
        figures: tuple[tuple[str, int | float | str], ...] = (
            ("cpu_pct", cpu_pct),
            ("gpu_pct", gpu_pct),
            ("nvme_pct", nvme_pct),
            ("shared_pct", shared_pct),
            ("miss_pct", miss_pct),
        )
        both = (final.load.ttft_p95_ms, same.load.ttft_p95_ms)
        if same.load.overloaded or not all(map(math.isfinite, both)):
            # Without a finite TTFT p95 on either side there is no gain to quote.
            ttft_s = ("ttft_s", round(final.load.ttft_p95_ms / 1e3, 2))
            notes.append(Note("tier_hits_overloaded", (*figures, ttft_s)))
        else:
            compared = ttft_comparison(*both)
            notes.append(Note("tier_hits", (*figures, *compared)))
        if saved is not None:
            notes.append(Note("gpus_saved", (("gpus", saved),)))
        else:
            notes.append(Note("no_tier_unreachable"))
    return Benefit(pays, tuple(notes), saved, miss_ms, cpu_ms)


def with_benefit(verdict: Verdict, benefit: Benefit, warnings: tuple[Note, ...] = ()) -> Verdict:
    """The plan's verdict with the traffic's figures: it pays only when both say so; the
    reasons gain the benefit's notes (a note the verdict already gives is not repeated)
    and the warnings gain ``warnings``."""
    codes = {n.code for n in verdict.reason_notes}
    extra = tuple(n for n in benefit.notes if n.code not in codes)
    return Verdict(
        verdict.offload_pays and benefit.offload_pays,
        verdict.reason_notes + extra,
        verdict.warning_notes + warnings,
        verdict.binding,
    )
