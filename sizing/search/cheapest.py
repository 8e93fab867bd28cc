"""The cheapest configurations that serve a workload, across GPU types, counts, TP sizes
and tiers.

The search sizes every configuration with the same orchestrator as a single plan
(:func:`sizing.plan.orchestrator.make_plan`) and the same bill of materials
(:func:`sizing.bom.lines.bill_of_materials`), and ranks them with a price function the caller
passes in (the configurator prices a BOM from its price list exactly as a quote does);
money itself never enters the engine, the search only compares what the function returns.

Space (what the builder sells, docs/sizing.md §9 and :mod:`sizing.bom.lines`; built in
:mod:`sizing.search.space`): GPU types the caller names; GPUs per node from 2 to 8, for a
module GPU only the counts its baseboard comes with; the KV dtype (FP8 where allowed and
native); the NVMe tier on and off; and, as variants of each sized configuration, every
larger TP size (with fewer replicas), every smaller DIMM layout down to the host-memory
baseline (a CPU tier capped by it, a lower hit rate) and no shared tier where the plan
has one.

Pruning rules (stated, safe for what is returned):

1. Where FP8 is allowed and native, the 16-bit cache is not evaluated. It doubles the
   bytes of every conversation (``sizing.model.architecture``), so the same GPUs hold at most
   as many conversations, the CPU tier and the NVMe tier grow, and a reload moves twice
   the bytes: its plan is never cheaper and never faster.
2. Larger DIMM layouts than the plan's own are not evaluated: its CPU tier already keeps
   every user warm, so more DRAM costs more and serves no faster.
3. Branch and bound on price: each configuration's floor
   (:func:`sizing.search.space.floor_price`: the chassis, CPUs and GPUs of one node and
   the cheapest DIMM layout that meets the host-memory baseline, lines every BOM of it
   contains) is priced first, and configurations are sized in the order of their floors
   from a priority queue; a variant enters the queue with its parent's floor (a lower
   bound for it too: same GPUs, and every layout meets the baseline). The answer reports
   configurations up to the larger of :data:`FRONT_PRICE_FACTOR` × the cheapest price
   and the ``top``-th cheapest; once ``top`` meet the workload, the first configuration
   whose floor exceeds that range stops the search, since its price and every later
   one's exceed it too.

Each configuration is priced once and sized at most once, and the space per GPU type is
bounded by a constant (:mod:`sizing.search.space`), so the cost grows at most linearly
with the number of GPU types. What sizing does not need to repeat is shared, never
approximated, through one :class:`~sizing.plan.memo.PlanMemo` per search: the base
configurations of one GPU type and count (NVMe on and off) share one floor and one
layout; the plans of one GPU type and TP share the reload figures, the performance
model's times per turn and the evaluations of replica counts, and the plans of every GPU
type share the hit-rate windows of the workload's busy-hour stream
(:class:`sizing.serving.replica_model.ReplicaModels`).

Hard constraints and targets: :mod:`sizing.search.evaluate` (a configuration breaking a
hard constraint is never returned, only counted in :attr:`Recommendation.rejected`);
configurations that buy the same parts are one offer (:mod:`sizing.search.offers`).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic

from sizing.errors import InfeasibleError
from sizing.hardware import catalog
from sizing.hardware.chassis import chassis_for, check_gpu_cooling
from sizing.performance import NoMeasuredBasis
from sizing.performance.calibration import prefill_class
from sizing.plan.memo import PlanMemo
from sizing.plan.orchestrator import Plan, PlanRequest, make_plan, validate
from sizing.search import nearest as search_nearest
from sizing.search.configuration import Configuration, P, PriceFn, Rejection
from sizing.search.evaluate import evaluate, misses, rejection
from sizing.search.nearest import NO_BASIS, TPOT_TARGET, TTFT_TARGET, RelaxedTargets
from sizing.search.offers import Distinct, rank, sells_asked_nvme
from sizing.search.pareto import pareto_front
from sizing.search.space import (
    GPUS_PER_NODE,
    candidates,
    floor_price,
    variants,
)

__all__ = [
    "GPUS_PER_NODE",
    "NO_BASIS",
    "TPOT_TARGET",
    "TTFT_TARGET",
    "Recommendation",
    "candidates",
    "evaluate",
    "exhaustive",
    "recommend",
]

DEFAULT_TOP = 3
"""How many of the cheapest configurations a recommendation lists."""

FRONT_PRICE_FACTOR = 2
"""The answer reports configurations up to this many times the cheapest price (a buyer
who asks for the cheapest configuration is not shown one at three times its price)."""


@dataclass(frozen=True)
class Recommendation(Generic[P]):
    """The search's answer.

    Attributes:
        cheapest: up to ``top`` configurations that meet every target, cheapest first.
        pareto: the configurations (meeting every target) that no other beats on both
            price and the second axis (:func:`pareto_axis`), cheapest first.
        feasible: every configuration sized that breaks no hard constraint, up to the
            reported price range (module docstring), cheapest first.
        rejected: the configurations that break a hard constraint.
        reference: the requested layout itself, sized and priced (``None`` if it breaks
            a hard constraint or is not priced).
        binding: when nothing meets the targets, the target or constraint that binds.
        nearest: when nothing meets the targets, the configuration that comes closest.
        relaxed: when no configuration can meet a latency target (it lies too close to
            what one request takes without load), the one target every configuration
            was then sized for (:func:`sizing.search.nearest.relaxed_targets`):
            ``cheapest`` and ``pareto`` meet it, and every configuration's misses are
            still counted against the customer's targets.
        without_tier: the cheapest configuration that meets the same targets without a
            CPU tier, found by the same search over the same space with
            ``without_cpu_tier`` set (``None`` when none does or nothing meets them).
        evaluated: plans made (the reference included).
        considered: configurations in the space that were priced (the reference
            included): the base configurations and the variants of those sized.
    """

    cheapest: tuple[Configuration[P], ...]
    pareto: tuple[Configuration[P], ...]
    feasible: tuple[Configuration[P], ...]
    rejected: tuple[Rejection, ...]
    reference: Configuration[P] | None
    binding: str | None = None
    nearest: Configuration[P] | None = None
    evaluated: int = 0
    considered: int = 0
    without_tier: Configuration[P] | None = None
    unpriced: tuple[str, ...] = field(default=())
    relaxed: RelaxedTargets | None = None

    @property
    def dram_trade(self) -> tuple[Configuration[P] | None, Configuration[P] | None]:
        """(cheapest meeting the targets with a CPU tier, cheapest without one)."""
        if self.relaxed is not None:
            return None, None  # no configuration meets the customer's targets
        ok = [c for c in self.feasible if c.meets_targets]
        with_tier = next((c for c in ok if c.has_cpu_tier), None)
        return with_tier, self.without_tier


def _front_cap(meeting: Sequence[Configuration[P]], top: int) -> Any:
    """The highest price the answer reports: :data:`FRONT_PRICE_FACTOR` × the cheapest,
    and never below the ``top``-th cheapest (``None`` while fewer than ``top`` are known)."""
    if len(meeting) < top:
        return None
    cap = meeting[0].price * FRONT_PRICE_FACTOR
    kth = meeting[top - 1].price
    return kth if cap < kth else cap


class _Queue(Generic[P]):
    """The configurations waiting to be sized, cheapest floor first; a variant enters
    with its parent's floor (module docstring, rule 3)."""

    def __init__(self) -> None:
        self.heap: list[tuple[Any, int, PlanRequest, bool]] = []
        self.order = itertools.count()
        self.priced = 0

    def push(self, floor: Any, request: PlanRequest, *, base: bool) -> None:
        self.priced += 1
        heapq.heappush(self.heap, (floor, next(self.order), request, base))

    def pop(self) -> tuple[Any, PlanRequest, bool]:
        floor, _order, request, base = heapq.heappop(self.heap)
        return floor, request, base


def _refused(gpu_slug: str) -> tuple[str, str] | None:
    """(binding, message) when no chassis takes ``gpu_slug`` or it has no measured
    prefill (every plan on it would rest on a guess,
    :func:`sizing.performance.calibration.prefill_class`), else ``None``."""
    gpu = catalog.gpu(gpu_slug)
    try:
        check_gpu_cooling(chassis_for(gpu.slug), gpu)
    except InfeasibleError as exc:
        return exc.binding, exc.message
    try:
        prefill_class(gpu.slug, gpu.name)  # what every plan's TTFT on it rests on
    except NoMeasuredBasis as exc:
        return NO_BASIS, exc.message
    return None


def _seed_queue(
    request: PlanRequest,
    gpu_slugs: Iterable[str],
    gpus_per_node: Sequence[int],
    price: PriceFn[P],
) -> tuple[_Queue[P], list[Rejection], list[str]]:
    """The base configurations, priced by their floors; those whose GPU type is refused
    (:func:`_refused`, checked once per type) are rejected before they are sized, those
    whose floor is not priced listed as unpriced. The floor depends on the GPU type,
    count and platform only (:func:`floor_price`), so the NVMe on and off
    configurations share one."""
    queue: _Queue[P] = _Queue()
    rejected: list[Rejection] = []
    unpriced: list[str] = []
    floors: dict[tuple[str, int, str], Any] = {}
    refused: dict[str, tuple[str, str] | None] = {}  # per GPU type: (binding, message)
    for candidate in candidates(request, gpu_slugs, gpus_per_node):
        slug = candidate.workload.gpu
        if slug not in refused:
            refused[slug] = _refused(slug)
        why = refused[slug]
        if why is not None:
            queue.priced += 1
            rejected.append(rejection(candidate, *why))
            continue
        work = candidate.workload
        key = (work.gpu, work.gpus_per_node, candidate.platform_slug)
        if key not in floors:
            floors[key] = floor_price(candidate, price)
        floor = floors[key]
        if floor is None:
            queue.priced += 1
            unpriced.append(candidate.workload.gpu)
        else:
            queue.push(floor, candidate, base=True)
    return queue, rejected, unpriced


def recommend(
    request: PlanRequest,
    *,
    gpu_slugs: Iterable[str],
    price: PriceFn[P],
    gpus_per_node: Sequence[int] = GPUS_PER_NODE,
    top: int = DEFAULT_TOP,
    plan: Plan | None = None,
    memo: PlanMemo | None = None,
) -> Recommendation[P]:
    """Search the space of the module docstring for ``request``'s workload.

    Args:
        request: the customer's workload (model, context, users, KV dtype allowed, new
            conversations per day, active share); its GPU and count are the reference.
        gpu_slugs: GPU types to search (catalog slugs).
        price: the caller's price of a BOM, or ``None`` when a part is not priced.
        gpus_per_node: GPU counts per node to search (default 2 to 8).
        top: how many of the cheapest to return.
        plan: ``make_plan(request)`` when the caller has made it already (a page's form
            does): the requested layout is then not sized again.
        memo: what the caller's plans of this workload computed already
            (:class:`~sizing.plan.memo.PlanMemo`); a new one when not given, shared by
            every plan of the search.

    Returns:
        A :class:`Recommendation`; when nothing meets the targets, ``binding`` and
        ``nearest`` say why, and ``cheapest`` and ``pareto`` are empty, or, when a
        latency target lies too close to what one request takes without load on every
        configuration, they hold the configurations that meet one relaxed target for all
        (``relaxed``).

    Raises:
        SizingError: the workload itself is out of range, or the requested layout refuses
            it as :func:`sizing.plan.orchestrator.make_plan` does (a TP size it cannot take, traffic
            that does not fit the context), or a GPU slug is unknown.
    """
    validate(request)
    memo = PlanMemo() if memo is None else memo
    if plan is None:
        with contextlib.suppress(InfeasibleError):  # that layout cannot hold it; another may
            plan = make_plan(request, memo)  # the requested layout checked as ``size`` does
    gpu_slugs = tuple(gpu_slugs)
    first = _search(request, gpu_slugs, price, gpus_per_node, top, plan, memo)
    if first.cheapest:
        if request.workload.without_cpu_tier:
            return first  # asked without a tier: there is no other to compare with
        # The counterfactual "without a CPU tier" is sized, not estimated: the same search
        # over the same space for the same targets, every configuration without a tier.
        no_tier = replace(request, workload=request.workload.replace(without_cpu_tier=True))
        bare = _search(no_tier, gpu_slugs, price, gpus_per_node, 1, None, memo)
        return replace(
            first,
            without_tier=bare.cheapest[0] if bare.cheapest else None,
            evaluated=first.evaluated + bare.evaluated,
            considered=first.considered + bare.considered,
        )
    traffic = request.traffic
    relaxed = search_nearest.relaxed_targets(
        first.feasible, ttft_p95_ms=traffic.ttft_p95_ms, tpot_ms=traffic.tpot_ms
    )
    if relaxed is None:
        return first
    looser = replace(request, workload=request.workload.replace(**relaxed.workload_fields()))
    second = _search(looser, gpu_slugs, price, gpus_per_node, top, None, memo)

    def against_customer(config: Configuration[P]) -> Configuration[P]:
        wanted = misses(config.plan, ttft_p95_ms=traffic.ttft_p95_ms, tpot_ms=traffic.tpot_ms)
        return replace(config, misses=wanted)

    return Recommendation(
        cheapest=tuple(map(against_customer, second.cheapest)),
        pareto=tuple(map(against_customer, second.pareto)),
        feasible=tuple(map(against_customer, second.feasible)),
        rejected=second.rejected,
        reference=first.reference,
        binding=first.binding,
        nearest=None,
        evaluated=first.evaluated + second.evaluated,
        considered=first.considered + second.considered,
        without_tier=None,
        unpriced=tuple(dict.fromkeys((*first.unpriced, *second.unpriced))),
        relaxed=relaxed,
    )


def _search(
    request: PlanRequest,
    gpu_slugs: Iterable[str],
    price: PriceFn[P],
    gpus_per_node: Sequence[int],
    top: int,
    plan: Plan | None,
    memo: PlanMemo,
) -> Recommendation[P]:
    """One branch and bound over the space for ``request``'s targets (:func:`recommend`'s
    arguments; ``plan`` is the requested layout's plan, ``None`` when it cannot be made;
    ``memo`` is shared by both searches of one recommendation: what the targets do not
    change, such as the layouts and the service tables, is sized once)."""
    queue, rejected, unpriced = _seed_queue(request, gpu_slugs, gpus_per_node, price)
    sized: Distinct[P] = Distinct()
    meeting = sized.meeting
    evaluated = 0
    while queue.heap:
        cap = _front_cap(meeting, top)
        if cap is not None and cap < queue.heap[0][0]:
            break  # floors only grow from here: nothing later can enter the answer
        floor, candidate, _base = queue.pop()
        evaluated += 1
        outcome = evaluate(candidate, price, memo=memo)
        if outcome is None:
            unpriced.append(candidate.workload.gpu)
        elif isinstance(outcome, Rejection):
            rejected.append(outcome)
        else:
            for variant in variants(outcome.plan):
                queue.push(floor, variant, base=False)
            if sells_asked_nvme(outcome):
                sized.add(outcome)
    feasible = list(sized.by_parts.values())
    cap = _front_cap(meeting, top)
    feasible = sorted((c for c in feasible if cap is None or not cap < c.price), key=rank)
    reference = None if plan is None else evaluate(request, price, plan)
    binding = nearest = None
    if not meeting:
        binding = search_nearest.binding(rejected, feasible)
        nearest = search_nearest.nearest(binding, feasible)
    return Recommendation(
        cheapest=tuple(meeting[:top]),
        pareto=pareto_front([c for c in feasible if c.meets_targets]),
        feasible=tuple(feasible),
        rejected=tuple(rejected),
        reference=reference if isinstance(reference, Configuration) else None,
        binding=binding,
        nearest=nearest,
        evaluated=evaluated + 1,
        considered=queue.priced + 1,
        unpriced=tuple(dict.fromkeys(unpriced)),
    )


def exhaustive(
    request: PlanRequest,
    gpu_slugs: Iterable[str],
    price: PriceFn[P],
    gpus_per_node: Sequence[int] = GPUS_PER_NODE,
) -> list[Configuration[P]]:
    """Every configuration of the space sized, without any bound: the base ones and,
    recursively, the variants of each (:mod:`sizing.search.space`), one per set of parts
    as the search keeps them (:class:`Distinct`). For checking the branch and bound
    against; the search itself never calls it.
    """
    todo = list(candidates(request, gpu_slugs, gpus_per_node))
    out: Distinct[P] = Distinct()
    memo = PlanMemo()
    while todo:
        outcome = evaluate(todo.pop(), price, memo=memo)
        if isinstance(outcome, Configuration):
            todo.extend(variants(outcome.plan))
            if sells_asked_nvme(outcome):
                out.add(outcome)
    return list(out.by_parts.values())
