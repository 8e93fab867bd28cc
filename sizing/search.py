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

Pruning rule (stated, safe): where FP8 is allowed and native, the 16-bit cache is not
evaluated. It doubles the bytes of every conversation (``sizing.architecture``), so the
same GPUs hold at most as many conversations, the CPU tier and the NVMe tier grow, and a
reload moves twice the bytes: its plan is never cheaper and never faster. Everything
else is exhaustive: at most ``7 counts × 2 NVMe options`` plans per GPU type, so the
cost grows linearly with the number of GPU types.

Hard constraints (a configuration breaking one is never returned, only counted in
:attr:`Recommendation.rejected`): the plan cannot be made (weights or one max-length
conversation do not fit, host memory beyond the largest DIMMs, TP divisibility); the BOM
does not fit the chassis (GPU slots, DIMM slots, NVMe bays); the CPU tier would only
mirror the GPU cache (verdict binding "mirror"). Targets (a configuration that misses
one is kept as "nearest" but not recommended): the users active at once are resident on
the GPUs (``active_share``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol, TypeVar

from sizing import catalog
from sizing.bom import Bom, bill_of_materials
from sizing.errors import InfeasibleError, SizingError
from sizing.plan import Plan, PlanRequest, make_plan
from sizing.units import GIB
from sizing.verdict import BINDING

GPUS_PER_NODE = (2, 3, 4, 5, 6, 7, 8)
"""GPU counts per node the builder sells (DESIGN §1: 2 to 8 GPUs per node)."""

DEFAULT_TOP = 3
"""How many of the cheapest configurations a recommendation lists."""


class Comparable(Protocol):
    """What the price function returns: anything ordered (EUR as ``Decimal``)."""

    def __lt__(self, other: Any, /) -> bool: ...


P = TypeVar("P", bound=Comparable)

PriceFn = Callable[[Bom], "P | None"]
"""The caller's price of a BOM (``None``: a part is not on the price list)."""


@dataclass(frozen=True)
class Miss:
    """A target a configuration misses.

    Attributes:
        target: the target's name (``"active users resident"``, ``"TTFT p95"``).
        value: what the configuration reaches.
        limit: what the target asks for.
        shortfall: how far off, as a share of the limit (0.25 = 25 % short).
    """

    target: str
    value: float
    limit: float
    shortfall: float


@dataclass(frozen=True)
class Configuration(Generic[P]):
    """One sized and priced configuration.

    Attributes:
        plan: its sizing plan (figures per node).
        bom: its bill of materials.
        price: the caller's price of ``bom``.
        misses: targets it misses (empty: it meets the workload).
        ttft_p95_ms: TTFT p95 at the busiest hour, ms, when the performance model gives it.
        cpu_hit_rate: share of returning users served from the CPU tier, when modelled.
    """

    plan: Plan
    bom: Bom
    price: P
    misses: tuple[Miss, ...] = ()
    ttft_p95_ms: float | None = None
    cpu_hit_rate: float | None = None

    @property
    def meets_targets(self) -> bool:
        """True when no target is missed."""
        return not self.misses

    @property
    def key(self) -> tuple[str, int, int, str, int]:
        """Identity: GPU, GPUs per node, nodes, KV dtype, new conversations per day."""
        r = self.plan.request
        return (
            r.gpu_slug,
            r.gpus_per_node,
            self.plan.parallelism.nodes,
            r.kv_dtype,
            r.new_conversations_per_day,
        )

    @property
    def gpus(self) -> int:
        """GPUs over all nodes."""
        return self.plan.request.gpus_per_node * self.plan.parallelism.nodes

    @property
    def has_cpu_tier(self) -> bool:
        """True when the plan sells a CPU offload tier."""
        return self.plan.cpu_tier.total_gib > 0

    @property
    def nvme_tb(self) -> float:
        """Raw NVMe tier capacity per node, TB."""
        return self.plan.nvme.capacity_tb if self.plan.nvme.drive else 0.0

    @property
    def shared_tier_tb(self) -> float:
        """Shared (NFS/S3) tier capacity, TB (0: none planned)."""
        return 0.0

    @property
    def resident_conversations(self) -> int:
        """Full-length conversations resident on all GPUs."""
        return self.plan.parallelism.conversations_on_gpus


@dataclass(frozen=True)
class Rejection:
    """A configuration that breaks a hard constraint.

    Attributes:
        gpu_slug, gpus_per_node, kv_dtype, new_conversations_per_day: what was tried.
        binding: the constraint that breaks (``InfeasibleError.binding`` or a verdict name).
        message: the engine's sentence.
    """

    gpu_slug: str
    gpus_per_node: int
    kv_dtype: str
    new_conversations_per_day: int
    binding: str
    message: str


@dataclass(frozen=True)
class Recommendation(Generic[P]):
    """The search's answer.

    Attributes:
        cheapest: up to ``top`` configurations that meet every target, cheapest first.
        pareto: the configurations (meeting every target) that no other beats on both
            price and the second axis (:func:`pareto_axis`), cheapest first.
        feasible: every configuration that breaks no hard constraint, cheapest first.
        rejected: the configurations that break a hard constraint.
        reference: the requested layout itself, sized and priced (``None`` if it breaks
            a hard constraint or is not priced).
        binding: when nothing meets the targets, the target or constraint that binds.
        nearest: when nothing meets the targets, the configuration that comes closest.
        evaluated: plans made.
    """

    cheapest: tuple[Configuration[P], ...]
    pareto: tuple[Configuration[P], ...]
    feasible: tuple[Configuration[P], ...]
    rejected: tuple[Rejection, ...]
    reference: Configuration[P] | None
    binding: str | None = None
    nearest: Configuration[P] | None = None
    evaluated: int = 0
    unpriced: tuple[str, ...] = field(default=())

    @property
    def dram_trade(self) -> tuple[Configuration[P] | None, Configuration[P] | None]:
        """(cheapest meeting the targets with a CPU tier, cheapest without one)."""
        ok = [c for c in self.feasible if c.meets_targets]
        with_tier = next((c for c in ok if c.has_cpu_tier), None)
        without = next((c for c in ok if not c.has_cpu_tier), None)
        return with_tier, without


def kv_dtypes_for(request: PlanRequest, gpu_slug: str) -> tuple[str, ...]:
    """KV dtypes searched on ``gpu_slug``: rule in the module docstring.

    Raises:
        SizingError: for an unknown GPU slug (field ``gpu``).
    """
    if request.kv_dtype != "fp8":
        return (request.kv_dtype,)
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
    nvme_options = (
        (request.new_conversations_per_day, 0) if request.new_conversations_per_day else (0,)
    )
    out = []
    for slug in dict.fromkeys(gpu_slugs):
        for dtype in kv_dtypes_for(request, slug):
            for count in gpus_per_node:
                for per_day in nvme_options:
                    out.append(
                        replace(
                            request,
                            gpu_slug=slug,
                            gpus_per_node=count,
                            kv_dtype=dtype,
                            new_conversations_per_day=per_day,
                        )
                    )
    return out


def _misses(plan: Plan) -> tuple[Miss, ...]:
    active = plan.request.active_users
    on_gpus = plan.parallelism.conversations_on_gpus
    if active is not None and active > on_gpus:
        return (Miss(BINDING["active"], on_gpus, active, (active - on_gpus) / active),)
    return ()


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
    amount = price(bom)
    if amount is None:
        return None
    return Configuration(plan=plan, bom=bom, price=amount, misses=_misses(plan))


def _rejection(request: PlanRequest, binding: str, message: str) -> Rejection:
    return Rejection(
        request.gpu_slug,
        request.gpus_per_node,
        request.kv_dtype,
        request.new_conversations_per_day,
        binding,
        message,
    )


def pareto_axis(configs: Sequence[Configuration[Any]]) -> str:
    """The second axis of the front: ``ttft_p95_ms`` (lower wins) when every configuration
    has it, else ``cpu_hit_rate`` (higher wins), else ``resident_conversations`` (higher
    wins: fewer returning users need a reload)."""
    if configs and all(c.ttft_p95_ms is not None for c in configs):
        return "ttft_p95_ms"
    if configs and all(c.cpu_hit_rate is not None for c in configs):
        return "cpu_hit_rate"
    return "resident_conversations"


def _goodness(config: Configuration[Any], axis: str) -> float:
    """The second axis as "lower is better"."""
    if axis == "ttft_p95_ms":
        return float(config.ttft_p95_ms or 0.0)
    if axis == "cpu_hit_rate":
        return -float(config.cpu_hit_rate or 0.0)
    return -float(config.resident_conversations)


def pareto_front(configs: Sequence[Configuration[P]]) -> tuple[Configuration[P], ...]:
    """The configurations no other one beats on both price and :func:`pareto_axis`.

    Sorted by price; a configuration is kept when it is strictly better on the second
    axis than every cheaper one (ties in price: the better axis value first).
    """
    axis = pareto_axis(configs)
    ordered = sorted(configs, key=lambda c: (c.price, _goodness(c, axis), c.gpus))
    front: list[Configuration[P]] = []
    best = float("inf")
    for config in ordered:
        value = _goodness(config, axis)
        if value < best:
            front.append(config)
            best = value
    return tuple(front)


def _binding(rejected: Sequence[Rejection], feasible: Sequence[Configuration[Any]]) -> str:
    """The target missed by most near configurations, else the most common hard limit."""
    misses = Counter(m.target for c in feasible for m in c.misses)
    if misses:
        return misses.most_common(1)[0][0]
    counts = Counter(r.binding for r in rejected)
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
        SizingError: the workload itself is out of range (``sizing.plan.validate``), or a
            GPU slug is unknown.
    """
    from sizing.plan import validate

    validate(request)
    feasible: list[Configuration[P]] = []
    rejected: list[Rejection] = []
    unpriced: list[str] = []
    tried = candidates(request, gpu_slugs, gpus_per_node)
    for candidate in tried:
        outcome = evaluate(candidate, price)
        if outcome is None:
            unpriced.append(candidate.gpu_slug)
        elif isinstance(outcome, Rejection):
            rejected.append(outcome)
        elif outcome.plan.nvme.drive is not None or not candidate.new_conversations_per_day:
            feasible.append(outcome)
        # else: the plan sells no NVMe tier although asked; its twin without one is the same BOM
    feasible.sort(key=lambda c: (c.price, c.gpus, -c.resident_conversations))
    meeting = [c for c in feasible if c.meets_targets]
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
        pareto=pareto_front(meeting),
        feasible=tuple(feasible),
        rejected=tuple(rejected),
        reference=reference if isinstance(reference, Configuration) else None,
        binding=binding,
        nearest=nearest,
        evaluated=len(tried) + 1,
        unpriced=tuple(dict.fromkeys(unpriced)),
    )


def tier_gib(config: Configuration[Any]) -> float:
    """The configuration's CPU tier over all instances, GiB."""
    return config.plan.cpu_tier.total_bytes / GIB
