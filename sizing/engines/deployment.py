"""What every engine renderer needs from a plan: instances, their buffers, the tiers.

A :class:`Deployment` is built from a :class:`sizing.plan.Plan` by :func:`from_plan`;
the engine modules read only this, never the plan, so that each one states the plan's
bytes in its own unit and scope.

Rules:

- The CPU tier of one instance is the plan's ``cpu_tier.per_instance_gib`` (DESIGN §3.3:
  the tier belongs to one engine instance; 125 GiB in the seed example).
- The NVMe tier of one node holds one day of new conversations (``nvme.capacity_needed_tb``,
  DESIGN §3.4), split evenly over the node's instances.
- Parallelism inside an instance is TP only (PP = 1, DP = 1): each replica of the plan
  is its own engine process group (``sizing.gpu``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sizing.engines.flags import EngineVersions
from sizing.engines.placement import Slot, slots
from sizing.engines.shared_tier import TierOptions
from sizing.units import GIB, TB

if TYPE_CHECKING:
    from sizing.plan import Plan


@dataclass(frozen=True)
class Deployment:
    """The plan as the renderers see it; all sizes are bytes.

    Attributes:
        model_id: Hugging Face repo id served by every instance.
        context_tokens: ``--max-model-len`` / ``--context-length``.
        kv_dtype: the plan's KV dtype (``fp8``, ``auto``…).
        tensor_parallel_size: GPUs per instance.
        gpus_per_node: GPUs in one node.
        sockets: CPU sockets per node.
        slots: every instance of every node.
        cpu_bytes_per_instance: the plan's CPU tier of one instance, bytes (0: no tier).
        gpu_kv_bytes_per_instance: the instance's GPU KV cache, bytes.
        nvme_bytes_per_instance: the NVMe tier share of one instance, bytes (0: none).
        nvme_drive_count: NVMe KV drives per node.
        socket_memory_gb: DIMM capacity of one socket, GB.
        tiers: mount points, the shared tier, the hash seed.
        versions: the engine releases targeted.
        pipeline_parallel_size: always 1 (see module doc).
        data_parallel_size: always 1 (see module doc).
    """

    model_id: str
    context_tokens: int
    kv_dtype: str
    tensor_parallel_size: int
    gpus_per_node: int
    sockets: int
    slots: tuple[Slot, ...]
    cpu_bytes_per_instance: int
    gpu_kv_bytes_per_instance: int
    nvme_bytes_per_instance: int
    nvme_drive_count: int
    socket_memory_gb: int
    tiers: TierOptions = field(default_factory=TierOptions)
    versions: EngineVersions = field(default_factory=EngineVersions)
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1

    @property
    def world_size(self) -> int:
        """Worker processes of one instance (TP × PP)."""
        return self.tensor_parallel_size * self.pipeline_parallel_size

    @property
    def nodes(self) -> tuple[int, ...]:
        """Node numbers, from 1."""
        return tuple(sorted({s.node for s in self.slots}))

    def node_slots(self, node: int) -> tuple[Slot, ...]:
        """The instances of ``node``."""
        return tuple(s for s in self.slots if s.node == node)

    @property
    def has_nvme(self) -> bool:
        """Whether the plan has a local NVMe tier."""
        return self.nvme_bytes_per_instance > 0

    @property
    def has_cpu_tier(self) -> bool:
        """Whether the plan has a CPU tier at all."""
        return self.cpu_bytes_per_instance > 0

    @property
    def shared(self) -> str:
        """The shared tier kind (``none``, ``nfs``, ``s3``)."""
        return self.tiers.shared

    @property
    def total_cpu_bytes(self) -> int:
        """CPU tier over all instances, bytes."""
        return self.cpu_bytes_per_instance * len(self.slots)


def from_plan(
    plan: Plan, *, tiers: TierOptions | None = None, versions: EngineVersions | None = None
) -> Deployment:
    """The :class:`Deployment` of ``plan`` with the given tiers and engine versions."""
    par = plan.parallelism
    nvme_bytes = 0
    if plan.nvme.drive is not None and par.replicas:
        nvme_bytes = round(plan.nvme.capacity_needed_tb * TB / par.replicas)
    return Deployment(
        model_id=plan.request.model.repo_id,
        context_tokens=plan.request.context_tokens,
        kv_dtype=plan.request.kv_dtype,
        tensor_parallel_size=par.tensor_parallel_size,
        gpus_per_node=plan.request.gpus_per_node,
        sockets=plan.host.sockets,
        slots=slots(
            nodes=par.nodes,
            gpus_per_node=plan.request.gpus_per_node,
            tensor_parallel_size=par.tensor_parallel_size,
            replicas_per_node=par.replicas,
            sockets=plan.host.sockets,
        ),
        cpu_bytes_per_instance=round(plan.cpu_tier.per_instance_gib * GIB),
        gpu_kv_bytes_per_instance=round(par.kv_cache_gib_per_gpu * par.tensor_parallel_size * GIB),
        nvme_bytes_per_instance=nvme_bytes,
        nvme_drive_count=plan.nvme.drive_count,
        socket_memory_gb=plan.host.gb_per_socket,
        tiers=tiers or TierOptions(),
        versions=versions or EngineVersions(),
    )


@dataclass(frozen=True)
class BundleFile:
    """One file of a bundle.

    Attributes:
        path: path inside the ZIP (``node1/vllm/instance0/serve.sh``).
        text: the file's content.
        executable: whether to mark it executable.
    """

    path: str
    text: str
    executable: bool = False


@dataclass(frozen=True)
class Rendered:
    """One engine's files and the notes the README carries for it.

    Attributes:
        engine: engine key (``vllm``, ``lmcache``…).
        files: the files.
        notes: sentences for the README (limits, what was not emitted and why).
    """

    engine: str
    files: tuple[BundleFile, ...]
    notes: tuple[str, ...] = ()
