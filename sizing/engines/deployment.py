"""What every engine renderer needs from a plan: instances, their buffers, the tiers.

A :class:`Deployment` is built from a :class:`sizing.plan.orchestrator.Plan` by :func:`from_plan`;
the engine modules read only this, never the plan, so that each one states the plan's
bytes in its own unit and scope.

Rules:

- The CPU tier of one instance is the plan's ``cpu_tier.per_instance_gib`` (docs/sizing.md §4:
  the tier belongs to one engine instance; 125 GiB in the seed example).
- The NVMe tier of one node holds one day of new conversations (``nvme.capacity_needed_tb``,
  docs/sizing.md §5), split evenly over the node's instances.
- Parallelism follows the plan (``sizing.layout.parallelism.Parallelism``): an instance is one
  replica of ``TP × PP`` GPUs, one pipeline stage per node; with expert parallel the
  replicas are the data-parallel ranks of one engine (``DP`` = the plan's replicas,
  ``EP = TP × DP``, vLLM ``--enable-expert-parallel``) and each rank owns its CPU tier.
  The CPU tier of one instance (or rank) is spread over its ``TP × PP`` workers, so a
  node of a pipeline-parallel instance holds ``1/PP`` of it.
- The NVMe tier is split evenly over the plan's instances (``total_replicas``).
- GPU KV of one instance: the plan's budget per card × ``TP × PP``.
- Each engine reads the tier in its own semantics from what one conversation leaves on
  each rank (:class:`sizing.memory.rank_bytes.RankBytes`): the settings hold the plan's
  ``conversations_per_instance`` in that engine's unit and scope. ``cpu_bytes_per_instance``
  is what all ranks store together (the plan's tier).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sizing.engines.flags import EngineVersions
from sizing.engines.placement import Slot, slots
from sizing.engines.shared_tier import TierOptions
from sizing.memory.rank_bytes import RankBytes
from sizing.plan.orchestrator import Plan
from sizing.units import GIB, TB


@dataclass(frozen=True)
class Deployment:
    """The plan as the renderers see it; all sizes are bytes.

    Attributes:
        model_id: Hugging Face repo id served by every instance.
        context_tokens: ``--max-model-len`` / ``--context-length``.
        kv_dtype: the plan's KV dtype (``fp8``, ``auto``…).
        tensor_parallel_size: GPUs per pipeline stage of an instance (TP).
        gpus_per_node: GPUs in one node.
        sockets: CPU sockets per node.
        slots: every instance of every node.
        cpu_bytes_per_instance: the plan's CPU tier of one instance as all its ranks
            store it, bytes (0: no tier).
        conversations_per_instance: conversations one instance's tier keeps.
        ranks: one conversation and the shared prompt on each rank of an instance.
        tier_mirrors_gpu: whether an instance's tier keeps no more distinct
            conversations than its GPUs (the plan's check, docs/sizing.md §4).
        gpu_kv_bytes_per_instance: the instance's GPU KV cache, bytes.
        nvme_bytes_per_instance: the NVMe tier share of one instance, bytes (0: none).
        nvme_drive_count: NVMe KV drives per node.
        socket_memory_gb: DIMM capacity of one socket, GB.
        tiers: mount points, the shared tier, the hash seed.
        versions: the engine releases targeted.
        pipeline_parallel_size: pipeline stages of an instance, one per node (PP).
        data_parallel_size: data-parallel ranks of the expert-parallel engine (DP; 1
            without expert parallel).
        expert_parallel: whether the routed experts are spread over ``TP × DP`` GPUs.
        layout: the plan's replica arithmetic in words.
        hybrid: whether the model has linear-attention or Mamba layers (a fixed state
            per sequence), whose offloading support depends on the engine release.
        weights_bytes: the checkpoint's weights, bytes (what a pod downloads).
    """

    model_id: str
    context_tokens: int
    kv_dtype: str
    tensor_parallel_size: int
    gpus_per_node: int
    sockets: int
    slots: tuple[Slot, ...]
    cpu_bytes_per_instance: int
    conversations_per_instance: int
    ranks: RankBytes
    tier_mirrors_gpu: bool
    gpu_kv_bytes_per_instance: int
    nvme_bytes_per_instance: int
    nvme_drive_count: int
    socket_memory_gb: int
    tiers: TierOptions = field(default_factory=TierOptions)
    versions: EngineVersions = field(default_factory=EngineVersions)
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    expert_parallel: bool = False
    layout: str = ""
    hybrid: bool = False
    weights_bytes: int = 0

    @property
    def world_size(self) -> int:
        """Worker processes of one instance or DP rank (TP × PP)."""
        return self.tensor_parallel_size * self.pipeline_parallel_size

    @property
    def heads(self) -> tuple[Slot, ...]:
        """The head slot (stage 0) of every instance: one per instance or DP rank."""
        return tuple(s for s in self.slots if s.is_head)

    @property
    def multi_node(self) -> bool:
        """Whether an instance spans nodes (pipeline parallel)."""
        return self.pipeline_parallel_size > 1

    @property
    def launch_supported(self) -> bool:
        """Whether the bundle can launch this layout with confirmed flags.

        Data-parallel ranks that each span several nodes (expert parallel together
        with pipeline parallel) have no confirmed multi-node launch: vLLM 0.31/0.33
        picks a rank's local GPU from its DP rank only when the rank fits one node
        (``ParallelConfig.get_local_gpu_index``).
        """
        return not (self.data_parallel_size > 1 and self.pipeline_parallel_size > 1)

    def rank_tier_bytes(self, stage: int = 0) -> int:
        """The tier one rank of pipeline stage ``stage`` stores, bytes (its conversations
        and the shared prompt)."""
        return self.ranks.stages[stage].tier_bytes(self.conversations_per_instance)

    @property
    def binding_rank_tier_bytes(self) -> int:
        """The tier of the fullest rank (the stage with the most cache), bytes."""
        return self.ranks.binding_rank_bytes(self.conversations_per_instance)

    @property
    def vllm_native_bytes(self) -> int:
        """``cpu_bytes_to_use`` that holds the instance's conversations (0: no tier)."""
        n = self.conversations_per_instance
        return self.ranks.vllm_native_bytes(n) if n else 0

    def lmcache_server_bytes(self, slot: Slot) -> int:
        """What the LMCache server beside ``slot`` keeps, bytes (0: no tier)."""
        n = self.conversations_per_instance
        return self.ranks.lmcache_server_bytes(n, slot.stage) if n else 0

    def cpu_bytes_on_node(self, slot: Slot) -> int:
        """What the workers on ``slot``'s node allocate of their instance's tier, bytes
        (each rank sized like the fullest, as the plan's tier is)."""
        return len(slot.worker_ranks) * self.binding_rank_tier_bytes

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
        return self.cpu_bytes_per_instance * len(self.heads)


def from_plan(
    plan: Plan, *, tiers: TierOptions | None = None, versions: EngineVersions | None = None
) -> Deployment:
    """The :class:`Deployment` of ``plan`` with the given tiers and engine versions.

    Raises:
        ValueError: if the plan's nodes are not a multiple of its pipeline stages.
    """
    par = plan.parallelism
    kept = plan.cpu_tier.conversations_per_instance
    ranks = plan.cpu_tier.ranks
    nvme_bytes = 0
    if plan.nvme.drive is not None and par.total_replicas:
        nvme_bytes = round(plan.nvme.capacity_needed_tb * TB / par.total_replicas)
    return Deployment(
        model_id=plan.request.model.repo_id,
        context_tokens=plan.request.workload.context_tokens,
        kv_dtype=plan.request.workload.kv_dtype,
        tensor_parallel_size=par.tensor_parallel_size,
        gpus_per_node=plan.request.workload.gpus_per_node,
        sockets=plan.host.sockets,
        slots=slots(
            nodes=par.nodes,
            gpus_per_node=plan.request.workload.gpus_per_node,
            tensor_parallel_size=par.tensor_parallel_size,
            replicas_per_node=par.replicas,
            sockets=plan.host.sockets,
            pipeline_parallel_size=par.pipeline_parallel_size,
            data_parallel=par.data_parallel_size > 1,
        ),
        cpu_bytes_per_instance=ranks.stored_bytes(kept) if kept else 0,
        conversations_per_instance=kept,
        ranks=ranks,
        tier_mirrors_gpu=not plan.cpu_tier.exceeds_gpu_cache,
        gpu_kv_bytes_per_instance=round(par.kv_cache_gib_per_gpu * par.gpus_per_replica * GIB),
        nvme_bytes_per_instance=nvme_bytes,
        nvme_drive_count=plan.nvme.drive_count,
        socket_memory_gb=plan.host.gb_per_socket,
        tiers=tiers or TierOptions(),
        versions=versions or EngineVersions(),
        pipeline_parallel_size=par.pipeline_parallel_size,
        data_parallel_size=par.data_parallel_size,
        expert_parallel=par.expert_parallel_size > 1,
        layout=par.layout,
        hybrid=any(layer.state is not None for layer in plan.request.model.architecture.layers),
        weights_bytes=plan.request.model.weights_bytes,
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
