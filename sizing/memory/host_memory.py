"""The CPU-memory offload tier, the host memory a node needs and its DIMM layout.

Rules (sizing article; docs/sizing.md §4):

- Conversations that are not resident on the GPUs rest between turns. Keeping every
  user warm needs a CPU tier of ``users × conversation_gib`` (500 × 1 GiB = 500 GiB ≈
  537 GB). With no resting conversation there is no tier to sell.
- A system prompt shared by all conversations is stored once per engine instance, as
  prefix caching keeps one copy of identical prefix blocks (vLLM docs, "Automatic
  Prefix Caching"; LMCache and the offloading connectors key CPU blocks by the same
  prefix hashes). Each instance's tier then holds its conversations without the prefix plus
  one prefix; with no shared prompt this is the seed's rule.
- The tier belongs to one engine instance: each replica keeps ``⌈users / replicas⌉``
  conversations (125 with four replicas), stored as its ranks store them: per-rank bytes
  × ranks, so KV heads replicated when TP exceeds them and MLA latents are counted once
  per rank (:mod:`sizing.memory.rank_bytes`; 125 GiB per instance in the seed example). The
  instance's users must be more distinct conversations than its GPU cache has room for
  (125 > 51), else the tier only mirrors the GPU (vLLM offloading guide, quoted by the
  seed); conversations are compared, not bytes summed over ranks, since an MLA latent
  sits on every rank.
- Pinned memory cannot be swapped, so the OS, containers, a RAG index and the page
  cache need room beside it. Host RAM is at least the larger of twice the GPU memory
  (the no-offload baseline: 4 × 96 GB → 768 GB) and the buffer plus a reserve equal to
  the GPU memory (537 + 384 = 921 GB).
- The layout is balanced: the same DIMM in every channel of both sockets, one DIMM per
  channel first (24 DIMMs on 2 × 12 channels), the smallest size that reaches the need
  (Dell and Cisco population rules in the hardware notes; 2 DIMMs per channel lowers
  the memory clock, so it is only a fallback).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.errors import Fix, InfeasibleError, SizingError, Value, gettext_noop
from sizing.hardware.catalog import Platform, dimm_sizes_gb
from sizing.memory.rank_bytes import RankBytes
from sizing.units import GB, GIB


@dataclass(frozen=True)
class CpuTier:
    """The CPU-memory offload tier.

    Attributes:
        total_gib: pinned memory over all instances, GiB.
        per_instance_gib: pinned memory of one engine instance (all its ranks), GiB.
        conversations_per_instance: full-length conversations one instance's tier keeps
            (0: no tier).
        users_per_instance: the users one instance serves on average.
        gpu_conversation_capacity: distinct conversations the instance's GPU cache has
            room for (not rounded down), for comparison.
        ranks: what one conversation leaves on each rank (each engine's setting is read
            from it, :mod:`sizing.memory.rank_bytes`).
    """

    total_gib: float
    per_instance_gib: float
    conversations_per_instance: int
    users_per_instance: float
    gpu_conversation_capacity: float
    ranks: RankBytes

    @property
    def total_gb(self) -> float:
        """The tier in GB (10^9 bytes)."""
        return self.total_gib * GIB / GB

    @property
    def total_bytes(self) -> int:
        """The tier in bytes."""
        return round(self.total_gib * GIB)

    @property
    def exceeds_gpu_cache(self) -> bool:
        """True when an instance's users are more distinct conversations than its GPU
        cache has room for (else the tier only mirrors the GPUs)."""
        return self.users_per_instance > self.gpu_conversation_capacity


@dataclass(frozen=True)
class HostMemory:
    """Host memory of one node.

    Attributes:
        need_gb: the planning rule's minimum, GB.
        baseline_gb: twice the node's GPU memory, GB (the no-offload baseline).
        dimm_count: DIMMs in the node.
        dimm_gb: capacity of each DIMM, GB.
        dimms_per_channel: 1 or 2.
        sockets: CPU sockets.
        buffer_gb: pinned offload buffer on this node, GB.
    """

    need_gb: float
    baseline_gb: float
    dimm_count: int
    dimm_gb: int
    dimms_per_channel: int
    sockets: int
    buffer_gb: float

    @property
    def total_gb(self) -> int:
        """Installed memory, GB."""
        return self.dimm_count * self.dimm_gb

    @property
    def free_after_buffer_gb(self) -> float:
        """Memory left beside the pinned buffer for OS, containers and page cache, GB."""
        return self.total_gb - self.buffer_gb

    @property
    def dimms_per_socket(self) -> int:
        """DIMMs on each socket."""
        return self.dimm_count // self.sockets

    @property
    def gb_per_socket(self) -> int:
        """Memory on each socket (NUMA node), GB."""
        return self.dimms_per_socket * self.dimm_gb


def cpu_tier(
    *,
    users: int,
    resting_conversations: int,
    instances: int,
    ranks: RankBytes,
    gpu_conversation_capacity: float,
    engine: str = "",
) -> CpuTier:
    """Size the CPU tier that keeps every user's conversation warm.

    Args:
        users: conversations to keep (one per user).
        resting_conversations: users that do not fit on the GPUs; 0 means no tier.
        instances: engine instances (replicas) that each own a share of the tier.
        ranks: one conversation and the shared prompt on each rank of an instance.
        gpu_conversation_capacity: distinct conversations one instance's GPU cache has
            room for, unrounded (an MLA latent on every rank counts once).
        engine: the serving engine the tier is sized for (``""``: not decided).

    Returns:
        ``⌈users / instances⌉`` conversations and one shared prompt per instance, in the
        bytes the engine's ranks allocate (:meth:`RankBytes.engine_bytes`; undecided: the
        largest, :meth:`RankBytes.stored_bytes`); all instances together for the total.

    Raises:
        ValueError: if ``instances`` is not positive.
    """
    if instances <= 0:
        raise ValueError(f"instances must be positive, got {instances}")
    kept = math.ceil(users / instances) if resting_conversations > 0 else 0
    per_instance = ranks.engine_bytes(engine, kept) / GIB if kept else 0.0
    return CpuTier(
        total_gib=per_instance * instances,
        per_instance_gib=per_instance,
        conversations_per_instance=kept,
        users_per_instance=users / instances,
        gpu_conversation_capacity=gpu_conversation_capacity,
        ranks=ranks,
    )


NEED_TOLERANCE_GB = 1e-6
"""A need this close above a layout is that layout: a CPU tier cut to the slots
(:mod:`sizing.layout.cluster`) comes back from GiB arithmetic a few ULPs above the cap."""


def layout_totals_gb(platform: Platform) -> tuple[int, ...]:
    """Installed memory of every balanced DIMM layout the chassis takes, GB, ascending:
    ``channels × DIMMs per channel × DIMM size`` (the layout rule of the module
    docstring; 24 × 32 GB = 768 GB up on the 24-slot chassis)."""
    channels = platform.sockets * platform.memory_channels_per_socket
    return tuple(
        sorted(
            {
                channels * dpc * size
                for dpc in range(1, platform.dimms_per_channel_max + 1)
                for size in dimm_sizes_gb()
            }
        )
    )


def largest_layout_gb(platform: Platform, at_most_gb: int) -> int | None:
    """The largest layout of :func:`layout_totals_gb` with at most ``at_most_gb`` GB
    (``None``: even the smallest has more)."""
    fitting = [t for t in layout_totals_gb(platform) if t <= at_most_gb]
    return fitting[-1] if fitting else None


def host_memory_cap_gb(limit_gb: int | None, platform: Platform, node_gpu_gb: float) -> int | None:
    """The installed memory a node may have at most, GB: the largest balanced layout
    within the customer's ``limit_gb`` (:func:`largest_layout_gb`); ``None`` without a
    limit.

    Raises:
        SizingError: on field ``max_host_memory_gb`` when no layout within the limit
            reaches the baseline of twice the node's GPU memory (rule above); the message
            names the higher floor: that baseline, or the smallest balanced layout when
            even it is above the baseline (4 × L4: 192 GB against 24 × 16 GB = 384 GB).
    """
    if limit_gb is None:
        return None
    layout = largest_layout_gb(platform, limit_gb)
    baseline = 2 * node_gpu_gb
    if layout is None and (smallest := layout_totals_gb(platform)[0]) > baseline:
        # The floor is the chassis's smallest layout, not the GPUs' baseline below it.
        raise SizingError(
            "max_host_memory_gb",
            template=gettext_noop(
                "%(got)s GB of host memory per node is below the smallest balanced DIMM "
                "layout, %(smallest_gb)s GB (one of the smallest DIMMs in every channel)"
            ),
            code="host_memory_below_smallest_layout",
            values={"got": limit_gb, "smallest_gb": smallest},
        )
    if layout is None or layout < baseline:
        raise SizingError(
            "max_host_memory_gb",
            template=gettext_noop(
                "%(got)s GB of host memory per node is below the %(baseline_gb)s GB its GPUs "
                "need beside it (twice their memory)"
            ),
            code="host_memory_below_baseline",
            values={"got": limit_gb, "baseline_gb": round(baseline)},
        )
    return layout


def host_memory(
    *,
    platform: Platform,
    gpu_memory_gb_total: float,
    buffer_gb: float,
    kv_cache_is_fp8: bool = False,
    unmeasured_gpu: str = "",
) -> HostMemory:
    """Choose the smallest balanced DIMM layout that meets the planning rule.

    Args:
        platform: sockets, channels and DIMMs per channel of the server.
        gpu_memory_gb_total: marketed memory of all GPUs in the node, GB (4 × 96 = 384).
        buffer_gb: pinned offload buffer on the node, GB (0 without a CPU tier).
        kv_cache_is_fp8: the KV cache is FP8 already (no fix suggests it).
        unmeasured_gpu: the GPU's name when it has no measured prefill throughput: the
            plan is then one node (:mod:`sizing.plan.under_traffic`), and the error says so
            and names a measured GPU and a host-memory limit as fixes.

    Raises:
        InfeasibleError: when even the largest DIMMs in every slot of the chassis are too
            small; the message names the slots and what would fix it.
    """
    baseline = 2 * gpu_memory_gb_total
    need = max(baseline, buffer_gb + gpu_memory_gb_total) if buffer_gb > 0 else baseline
    channels = platform.sockets * platform.memory_channels_per_socket
    for dpc in range(1, platform.dimms_per_channel_max + 1):
        for size in dimm_sizes_gb():
            if channels * dpc * size >= need - NEED_TOLERANCE_GB:
                return HostMemory(
                    need_gb=need,
                    baseline_gb=baseline,
                    dimm_count=channels * dpc,
                    dimm_gb=size,
                    dimms_per_channel=dpc,
                    sockets=platform.sockets,
                    buffer_gb=buffer_gb,
                )
    slots = channels * platform.dimms_per_channel_max
    largest = slots * dimm_sizes_gb()[-1]
    fixes = [Fix("fewer_users"), Fix("shorter_context")]
    if not kv_cache_is_fp8:
        fixes.insert(1, Fix("fp8_kv_cache_short"))
    values: dict[str, Value] = {
        "need_gb": round(need),
        "largest_gb": largest,
        "slots": slots,
        "dimm_gb": dimm_sizes_gb()[-1],
    }
    template = gettext_noop(
        "the CPU tier needs %(need_gb)s GB of host memory, more than the %(largest_gb)s GB "
        "one node can hold (%(slots)s DIMM slots × %(dimm_gb)s GB)"
    )
    if unmeasured_gpu:
        template = gettext_noop(
            "the CPU tier needs %(need_gb)s GB of host memory, more than the %(largest_gb)s GB "
            "one node can hold (%(slots)s DIMM slots × %(dimm_gb)s GB); without a measured "
            "prefill throughput of the %(gpu)s the plan cannot spread the users over more "
            "nodes"
        )
        values["gpu"] = unmeasured_gpu
        fixes += [Fix("measured_gpu"), Fix("host_memory_limit")]
    raise InfeasibleError(
        "users",
        template=template,
        binding="host memory per node",
        fixes=tuple(fixes),
        names_fixes=True,
        code="host_memory_per_node",
        values=values,
    )
