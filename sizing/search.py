"""The cheapest configurations that serve a workload, across GPU types, counts and tiers.

The search sizes every configuration with the same orchestrator as a single plan
(:func:`sizing.plan.make_plan`) and the same bill of materials
(:func:`sizing.bom.bill_of_materials`), and ranks them with a price function the caller
passes in (the configurator prices a BOM from its price list exactly as a quote does);
money itself never enters the engine, the search only compares what the function returns.

Space (what the builder sells, DESIGN §1 and :mod:`sizing.bom`):

- GPU types: the ones the caller names (the configurator passes every catalog GPU the
  price list carries).
- GPUs per node: 2 to 8 (eight double-width slots or baseboard modules per chassis).
- Tensor parallel size and replicas: the plan's rule (:mod:`sizing.gpu`): the smallest TP
  at which the weights and one max-length conversation fit, the other GPUs replicas.
- KV dtype: FP8 where the customer allows it (the request asks for ``fp8``) and the GPU
  runs an FP8 cache natively (``fp8_kv_cache`` in the hardware catalog); otherwise the
  requested dtype (16-bit where FP8 is allowed but not native).
- NVMe tier on and off, when the workload has new conversations per day.
- CPU tier and nodes: as the plan sizes them (the whole resting working set; pipeline
  parallel nodes only when the weights need them).

Pruning rules (stated, safe for what is returned):

1. Where FP8 is allowed and native, the 16-bit cache is not evaluated. It doubles the
   bytes of every conversation (``sizing.architecture``), so the same GPUs hold at most
   as many conversations, the CPU tier and the NVMe tier grow, and a reload moves twice
   the bytes: its plan is never cheaper and never faster.
2. Branch and bound on price: each configuration's floor (:func:`node_floor`: the
   chassis, CPUs and GPUs of one node, which every BOM of it contains) is priced first,
   and configurations are sized in the order of their floors. The answer reports
   configurations up to the larger of :data:`FRONT_PRICE_FACTOR` × the cheapest price
   and the ``top``-th cheapest; once ``top`` meet the workload, the first configuration
   whose floor exceeds that range stops the search, since its price and every later
   one's exceed it too.

The space has at most ``7 counts × 2 NVMe options`` configurations per GPU type, each
priced once and sized at most once, so the cost grows linearly with the number of GPU
types.

Hard constraints (a configuration breaking one is never returned, only counted in
:attr:`Recommendation.rejected`): the plan cannot be made (weights or one max-length
conversation do not fit, host memory beyond the largest DIMMs, TP divisibility); the BOM
does not fit the chassis (the GPU's cooling, GPU slots, DIMM slots, NVMe bays: a GPU no
chassis takes, such as the flow-through RTX PRO 6000 Workstation Edition, is rejected
before it is sized, :func:`sizing.bom.check_gpu_cooling`); the CPU tier would only
mirror the GPU cache (verdict binding "mirror"). Targets (a configuration that misses
one is kept as "nearest" but not recommended): the users active at once are resident on
the GPUs (``active_share``), and TTFT p95 and TPOT at the busiest hour within the
workload's targets (the plan under traffic, ``plan.serving``). A configuration whose GPU
has no measured basis for the TTFT is not recommended either: whether it meets the
target would be a guess (``sizing.performance``).
"""

from __future__ import annotations

import bisect
import contextlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic

from sizing import catalog
from sizing.architecture import conversation_bytes, kv_bytes_per_token
from sizing.bom import (
    COOLING_BINDING,
    CPU_SKU,
    Bom,
    BomLine,
    bill_of_materials,
    chassis_for,
    check_gpu_cooling,
    gpu_sku,
)
from sizing.configuration import Configuration, Miss, P, PriceFn, Rejection
from sizing.errors import InfeasibleError, SizingError
from sizing.gpu import MAX_PIPELINE_NODES
from sizing.pareto import pareto_front
from sizing.plan import Plan, PlanRequest, make_plan, validate
from sizing.units import GIB
from sizing.verdict import BINDING

GPUS_PER_NODE = (2, 3, 4, 5, 6, 7, 8)
"""GPU counts per node the builder sells (DESIGN §1: 2 to 8 GPUs per node)."""

DEFAULT_TOP = 3
"""How many of the cheapest configurations a recommendation lists."""

TTFT_TARGET = "TTFT p95"
TPOT_TARGET = "TPOT"
NO_BASIS = "no measured basis for the TTFT"
"""Names of the targets a plan under traffic can miss, and of the configurations whose
GPU the performance model has no measurement for (never recommended: their TTFT would
be a guess, ``sizing.performance``)."""

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
        without_tier: the cheapest configuration that meets the targets without a CPU
            tier: among those sized, and beyond the reported range among those whose GPUs
            could hold every conversation (:func:`could_hold_everyone`).
        evaluated: plans made (the reference included).
        considered: configurations in the space (the reference included); the others
            were priced out by :func:`node_floor`.
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

    @property
    def dram_trade(self) -> tuple[Configuration[P] | None, Configuration[P] | None]:
        """(cheapest meeting the targets with a CPU tier, cheapest without one)."""
        ok = [c for c in self.feasible if c.meets_targets]
        with_tier = next((c for c in ok if c.has_cpu_tier), None)
        return with_tier, self.without_tier


def kv_dtypes_for(request: PlanRequest, gpu_slug: str) -> tuple[str, ...]:
    """KV dtypes searched on ``gpu_slug``: rule in the module docstring.

    Raises:
        SizingError: for an unknown GPU slug (field ``gpu``).
    """
    if request.workload.kv_dtype != "fp8":
        return (request.workload.kv_dtype,)
    return ("fp8",) if catalog.gpu(gpu_slug).fp8_kv_cache else ("auto",)


def candidates(
    request: PlanRequest,
    gpu_slugs: Iterable[str],
    gpus_per_node: Sequence[int] = GPUS_PER_NODE,
) -> list[PlanRequest]:
    """Every request of the search space (module docstring), in a stable order.

    Args:
        request: the customer's workload; its GPU and count are replaced.
        gpu_slugs: GPU types to search.
        gpus_per_node: GPU counts per node to search.

    Raises:
        SizingError: for an unknown GPU slug (field ``gpu``).
    """
    per_day = request.workload.new_conversations_per_day
    nvme_options = (per_day, 0) if per_day else (0,)
    out = []
    for slug in dict.fromkeys(gpu_slugs):
        for dtype in kv_dtypes_for(request, slug):
            for count in gpus_per_node:
                for each_day in nvme_options:
                    out.append(
                        replace(
                            request,
                            workload=request.workload.replace(
                                gpu=slug,
                                gpus_per_node=count,
                                kv_dtype=dtype,
                                new_conversations_per_day=each_day,
                            ),
                        )
                    )
    return out


def _misses(plan: Plan) -> tuple[Miss, ...]:
    """The targets ``plan`` misses: the users active at once resident on the GPUs, and
    the TTFT p95 and TPOT targets at the busiest hour (``plan.serving``)."""
    out = []
    active = plan.request.workload.active_users
    on_gpus = plan.parallelism.conversations_on_gpus
    if active is not None and active > on_gpus:
        out.append(Miss(BINDING["active"], on_gpus, active, (active - on_gpus) / active))
    serving = getattr(plan, "serving", None)
    if serving is not None:
        load = serving.final.load
        for target, value, limit in (
            (TTFT_TARGET, load.ttft_p95_ms, serving.ttft_p95_target_ms),
            (TPOT_TARGET, load.tpot_ms, serving.tpot_target_ms),
        ):
            if value > limit:
                out.append(Miss(target, float(value), float(limit), (value - limit) / limit))
    return tuple(out)


def evaluate(request: PlanRequest, price: PriceFn[P]) -> Configuration[P] | Rejection | None:
    """Size, check and price one configuration.

    Returns:
        A :class:`Configuration`; a :class:`Rejection` naming the hard constraint it
        breaks (module docstring); ``None`` when ``price`` cannot price its BOM.
    """
    try:
        plan = make_plan(request)
        bom = bill_of_materials(plan)
    except InfeasibleError as exc:
        return _rejection(request, exc.binding, exc.message)
    except SizingError as exc:
        return _rejection(request, exc.field, exc.message)
    if plan.cpu_tier.total_gib > 0 and not plan.cpu_tier.exceeds_gpu_cache:
        return _rejection(request, BINDING["mirror"], plan.verdict.warnings[-1])
    note = getattr(plan, "serving_note", "")
    if note and getattr(plan, "serving", None) is None:
        return _rejection(request, NO_BASIS, note)
    amount = price(bom)
    if amount is None:
        return None
    return Configuration(plan=plan, bom=bom, price=amount, misses=_misses(plan))


def _rejection(request: PlanRequest, binding: str, message: str) -> Rejection:
    return Rejection(
        request.workload.gpu,
        request.workload.gpus_per_node,
        request.workload.kv_dtype,
        request.workload.new_conversations_per_day,
        binding,
        message,
    )


def node_floor(request: PlanRequest) -> Bom:
    """The lines every node of ``request``'s GPU type and count carries, whatever else it
    is sized for: the chassis, one CPU per socket and the GPUs (:mod:`sizing.bom`).

    Every BOM of such a plan has these lines at least once (once per node), and no price
    is negative (the price list refuses one), so this BOM's price is a lower bound of the
    plan's (the pruning rule of the module docstring).
    """
    slug, gpus = request.workload.gpu, request.workload.gpus_per_node
    chassis = chassis_for(slug)
    sockets = catalog.platform(request.platform_slug).sockets
    return Bom(
        nodes=1,
        lines=(
            BomLine(chassis.sku, "chassis", 1, 1, "", ""),
            BomLine(CPU_SKU, "cpu", sockets, sockets, "", ""),
            BomLine(gpu_sku(slug), "gpu", gpus, gpus, "", ""),
        ),
    )


def _rank(config: Configuration[P]) -> tuple[P, int, int]:
    return (config.price, config.gpus, -config.resident_conversations)


def _front_cap(meeting: Sequence[Configuration[P]], top: int) -> Any:
    """The highest price the answer reports: :data:`FRONT_PRICE_FACTOR` × the cheapest,
    and never below the ``top``-th cheapest (``None`` while fewer than ``top`` are known)."""
    if len(meeting) < top:
        return None
    cap = meeting[0].price * FRONT_PRICE_FACTOR
    kth = meeting[top - 1].price
    return kth if cap < kth else cap


def could_hold_everyone(request: PlanRequest) -> bool:
    """Whether ``request``'s GPUs could hold every user's conversation, so that the plan
    needs no CPU tier for memory: an upper bound from the memory alone.

    ``gpus × utilization × reported GiB`` (:mod:`sizing.gpu`'s budget before weights and
    overhead) over one node, or over :data:`sizing.gpu.MAX_PIPELINE_NODES` nodes when the
    weights need more than one, against ``users × (conversation − shared prompt)`` at
    TP 1 (TP never stores fewer bytes per conversation over all ranks).
    """
    work = request.workload
    gpu = catalog.gpu(work.gpu)
    arch = request.model.architecture
    node_gib = work.gpus_per_node * request.rule.utilization * gpu.reported_gib
    nodes = 1 if request.model.weights_bytes / GIB <= node_gib else MAX_PIPELINE_NODES
    per_token = kv_bytes_per_token(arch, work.kv_dtype)
    unique = conversation_bytes(arch, work.kv_dtype, work.context_tokens)
    unique -= per_token * work.shared_prompt_tokens
    return bool(nodes * node_gib * GIB >= work.users * unique)


def _cheapest_without_tier(
    request: PlanRequest,
    feasible: list[Configuration[P]],
    rest: Sequence[tuple[P, PlanRequest]],
    price: PriceFn[P],
) -> tuple[Configuration[P] | None, int]:
    """The cheapest configuration that meets the workload without a CPU tier, and the
    plans it took beyond the main search.

    Continues the branch and bound over the configurations the main search left, in the
    order of their floors, until a floor exceeds the best found. Beyond the main search's
    range only those that :func:`could_hold_everyone` are sized: a plan under traffic can
    also drop its tier when the tier does not pay, and such a configuration is found
    only within the main search's range.
    """
    best = min(
        (c for c in feasible if c.meets_targets and not c.has_cpu_tier), key=_rank, default=None
    )
    sized = 0
    for floor, candidate in rest:
        if best is not None and best.price < floor:
            break
        if not could_hold_everyone(candidate):
            continue
        sized += 1
        outcome = evaluate(candidate, price)
        if (
            isinstance(outcome, Configuration)
            and outcome.meets_targets
            and not outcome.has_cpu_tier
            and (
                outcome.plan.nvme.drive is not None
                or not candidate.workload.new_conversations_per_day
            )
            and (best is None or outcome.price < best.price)
        ):
            best = outcome
    return best, sized


def _binding(rejected: Sequence[Rejection], feasible: Sequence[Configuration[Any]]) -> str:
    """The target missed by most near configurations, else the most common hard limit
    (a GPU type no chassis takes is left out: the request's workload does not bind it)."""
    misses = Counter(m.target for c in feasible for m in c.misses)
    if misses:
        return misses.most_common(1)[0][0]
    counts = Counter(r.binding for r in rejected if r.binding != COOLING_BINDING)
    return counts.most_common(1)[0][0] if counts else "no GPU type on the price list"


def recommend(
    request: PlanRequest,
    *,
    gpu_slugs: Iterable[str],
    price: PriceFn[P],
    gpus_per_node: Sequence[int] = GPUS_PER_NODE,
    top: int = DEFAULT_TOP,
) -> Recommendation[P]:
    """Search the space of the module docstring for ``request``'s workload.

    Args:
        request: the customer's workload (model, context, users, KV dtype allowed, new
            conversations per day, active share); its GPU and count are the reference.
        gpu_slugs: GPU types to search (catalog slugs).
        price: the caller's price of a BOM, or ``None`` when a part is not priced.
        gpus_per_node: GPU counts per node to search (default 2 to 8).
        top: how many of the cheapest to return.

    Returns:
        A :class:`Recommendation`; when nothing meets the targets, ``cheapest`` and
        ``pareto`` are empty and ``binding`` and ``nearest`` say why.

    Raises:
        SizingError: the workload itself is out of range, or the requested layout refuses
            it as :func:`sizing.plan.make_plan` does (a TP size it cannot take, traffic
            that does not fit the context), or a GPU slug is unknown.
    """
    validate(request)
    with contextlib.suppress(InfeasibleError):  # that layout cannot hold it; another may
        make_plan(request)  # the requested layout checked as ``size`` and the plans API do
    feasible: list[Configuration[P]] = []
    rejected: list[Rejection] = []
    unpriced: list[str] = []
    tried = candidates(request, gpu_slugs, gpus_per_node)
    floors = []
    for candidate in tried:
        try:
            gpu = catalog.gpu(candidate.workload.gpu)
            check_gpu_cooling(chassis_for(gpu.slug), gpu)
        except InfeasibleError as exc:
            rejected.append(_rejection(candidate, exc.binding, exc.message))
            continue
        floor = price(node_floor(candidate))
        if floor is None:
            unpriced.append(candidate.workload.gpu)
        else:
            floors.append((floor, candidate))
    floors.sort(key=lambda pair: pair[0])
    meeting: list[Configuration[P]] = []
    evaluated = 0
    for floor, candidate in floors:
        cap = _front_cap(meeting, top)
        if cap is not None and cap < floor:
            break  # floors only grow from here: nothing later can enter the answer
        evaluated += 1
        outcome = evaluate(candidate, price)
        if outcome is None:
            unpriced.append(candidate.workload.gpu)
        elif isinstance(outcome, Rejection):
            rejected.append(outcome)
        elif (
            outcome.plan.nvme.drive is not None or not candidate.workload.new_conversations_per_day
        ):
            # (a plan that sells no NVMe tier although asked is its twin without one)
            feasible.append(outcome)
            if outcome.meets_targets:
                bisect.insort(meeting, outcome, key=_rank)
    without_tier = _cheapest_without_tier(request, feasible, floors[evaluated:], price)
    evaluated += without_tier[1]
    cap = _front_cap(meeting, top)
    feasible = sorted((c for c in feasible if cap is None or not cap < c.price), key=_rank)
    reference = evaluate(request, price)
    binding = nearest = None
    if not meeting:
        binding = _binding(rejected, feasible)
        near = [c for c in feasible if any(m.target == binding for m in c.misses)]
        nearest = min(
            near, key=lambda c: (min(m.shortfall for m in c.misses), c.price), default=None
        )
    return Recommendation(
        cheapest=tuple(meeting[:top]),
        pareto=pareto_front([c for c in feasible if c.meets_targets]),
        feasible=tuple(feasible),
        rejected=tuple(rejected),
        reference=reference if isinstance(reference, Configuration) else None,
        binding=binding,
        nearest=nearest,
        evaluated=evaluated + 1,
        considered=len(tried) + 1,
        without_tier=without_tier[0],
        unpriced=tuple(dict.fromkeys(unpriced)),
    )
