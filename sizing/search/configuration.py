"""One sized and priced configuration of the search (:mod:`sizing.search.cheapest`), what it
misses, and what breaks a hard constraint instead.

The price is the caller's (:data:`PriceFn`): an ordered quantity the engine compares and
scales by whole numbers, never a currency it computes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from sizing.bom.lines import Bom
from sizing.plan.orchestrator import Plan
from sizing.units import GIB


class Comparable(Protocol):
    """What the price function returns: ordered, and scaled by a whole number (EUR as
    ``Decimal``)."""

    def __lt__(self, other: Any, /) -> bool: ...

    def __mul__(self, other: int, /) -> Any: ...


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
    """

    plan: Plan
    bom: Bom
    price: P
    misses: tuple[Miss, ...] = ()

    @property
    def serving(self) -> Any:
        """The plan under traffic (hit rates, TTFT p95, nodes, shared tier), or ``None``
        where the plan has none (no measured basis for the GPU)."""
        return getattr(self.plan, "serving", None)

    @property
    def ttft_p95_ms(self) -> float | None:
        """TTFT p95 at the busiest hour, ms (``None`` without a serving model)."""
        serving = self.serving
        return None if serving is None else float(serving.final.load.ttft_p95_ms)

    @property
    def tpot_ms(self) -> float | None:
        """Time per output token at the busiest hour, ms (``None`` without one)."""
        serving = self.serving
        return None if serving is None else float(serving.final.load.tpot_ms)

    @property
    def cpu_hit_rate(self) -> float | None:
        """Share of returning users served from the CPU tier (``None`` without one)."""
        serving = self.serving
        return None if serving is None else float(serving.hits.cpu)

    @property
    def meets_targets(self) -> bool:
        """True when no target is missed."""
        return not self.misses

    @property
    def key(self) -> tuple[str, int, int, str, int]:
        """Identity: GPU, GPUs per node, nodes, KV dtype, new conversations per day the
        NVMe tier is sized for (0: none)."""
        r = self.plan.request
        return (
            r.workload.gpu,
            r.workload.gpus_per_node,
            self.plan.parallelism.nodes,
            r.workload.kv_dtype,
            r.workload.nvme_conversations_per_day,
        )

    @property
    def gpus(self) -> int:
        """GPUs over all nodes."""
        return self.plan.request.workload.gpus_per_node * self.plan.parallelism.nodes

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
        serving = self.serving
        shared = None if serving is None else serving.shared
        return 0.0 if shared is None else float(shared.capacity_tb)

    @property
    def resident_conversations(self) -> int:
        """Full-length conversations resident on all GPUs."""
        return self.plan.parallelism.conversations_on_gpus


@dataclass(frozen=True)
class Rejection:
    """A configuration that breaks a hard constraint.

    Attributes:
        gpu_slug, gpus_per_node, kv_dtype, new_conversations_per_day: what was tried
            (the new conversations a day the NVMe tier was sized for, 0: none).
        binding: the constraint that breaks (``InfeasibleError.binding`` or a verdict name).
        message: the engine's sentence.
    """

    gpu_slug: str
    gpus_per_node: int
    kv_dtype: str
    new_conversations_per_day: int
    binding: str
    message: str


def tier_gib(config: Configuration[Any]) -> float:
    """The configuration's CPU tier over all instances, GiB."""
    return config.plan.cpu_tier.total_bytes / GIB
