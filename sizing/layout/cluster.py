"""More than one node: how many identical nodes, the router in front, and the shared tier.

Rules and sources:

- **Nodes.** A node holds 2 to 8 GPUs (docs/sizing.md §9; the builder's range). The plan needs as
  many engine replicas as the larger of its memory need and its compute need; ``N``
  identical nodes carry them, every GPU of a node in a replica:
  ``N = ⌈replicas × GPUs per replica ÷ GPUs per node⌉``.
- **Host memory per node.** One node's pinned CPU tier is at most what its DIMM slots
  hold beside the reserve the host-memory rule keeps for everything else (the total GPU
  memory of the node; docs/sizing.md §4): ``slots × largest DIMM − GPU memory``. Users beyond
  what the nodes' CPU tiers hold rest in the shared tier instead: a node is not added
  for memory alone, since a shared NFS or S3 tier holds resting conversations for a
  fraction of a GPU node's price (NetApp seed: "durable, large, shareable backing
  store"), and the hit model says how many returns then reload from it.
- **Router.** With more than one instance a returning conversation finds its CPU-tier
  KV only on the instance that served it (seed: "a returning user only gets a hit on
  the copy that holds the conversation"), so a KV-aware router sits in front: NVIDIA
  Dynamo's frontend with ``--router-mode kv``, SGLang's router with its
  ``cache_aware`` policy, llm-d's prefix-aware scheduler, or the vLLM production-stack
  router with session affinity (``--routing-logic session``; engine_flags.md §4.2, §5.1),
  which is not KV-aware: it keeps each conversation on the instance that served it.
- **Shared tier** (NFS/pNFS or S3, NetApp seed). Present when there is more than one
  node or when the nodes' CPU tiers cannot hold every user. Capacity: every user's
  conversation once, as the whole cluster writes and reads one store
  (``users × conversation bytes``, TB = 10^12 B). Bandwidth per node: the reads of the
  returning users whose KV is only in the shared tier (``returns per s × shared hit
  share × bytes reloaded``) and the writes of every new block (vLLM's tiering "passes
  chunks to all configured secondary tiers at once", seed; docs/sizing.md §5). Every
  instance uses the same ``PYTHONHASHSEED`` and prefix hash algorithm, else blocks
  written by one are invisible to the others (engine_flags.md §1.4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.hardware.catalog import Platform, dimm_sizes_gb
from sizing.units import GB, TB

MAX_NODES = 512
"""Most nodes a plan may have; more is a field error, not a plan."""

_SESSION_ROUTER = (
    "vllm-router --service-discovery static --static-backends <instance URLs> "
    "--static-models <model, once per instance> --routing-logic session "
    "--session-key x-session-id"
)
"""The production-stack router with session affinity; it refuses to start without a
service discovery and, for static discovery, the backends and their models
(``src/vllm_router/parsers/parser.py`` ``validate_args``)."""

ROUTERS = {
    "vllm": (
        "vLLM production-stack router, session affinity",
        _SESSION_ROUTER,
    ),
    "lmcache": (
        "vLLM production-stack router, session affinity",
        _SESSION_ROUTER,
    ),
    "lmcache_server": (
        "vLLM production-stack router, session affinity",
        _SESSION_ROUTER,
    ),
    "sglang": ("SGLang router, cache-aware policy", "sglang_router --policy cache_aware"),
    "dynamo": (
        "NVIDIA Dynamo frontend, KV-aware routing",
        "python -m dynamo.frontend --router-mode kv",
    ),
}
"""The KV-aware router per engine: (name, command); sources in the module docstring."""


def max_buffer_gb_per_node(
    platform: Platform, gpu_memory_gb_per_node: float, host_memory_gb: int | None = None
) -> float:
    """Largest pinned CPU tier one node holds, GB: every slot with the largest DIMM (or
    the ``host_memory_gb`` the customer allows, when given), less the reserve of the
    host-memory rule (the node's GPU memory). Never negative."""
    slots = platform.sockets * platform.memory_channels_per_socket * platform.dimms_per_channel_max
    installed = slots * dimm_sizes_gb()[-1]
    if host_memory_gb is not None:
        installed = min(installed, host_memory_gb)
    return max(0.0, installed - gpu_memory_gb_per_node)


@dataclass(frozen=True)
class Router:
    """The KV-aware router in front of the instances.

    Attributes:
        name: what it is, in words.
        command: how it starts (the routing flag that makes it KV-aware).
    """

    name: str
    command: str


def router_for(engine: str) -> Router:
    """The KV-aware router for ``engine`` (:data:`ROUTERS`).

    Raises:
        ValueError: for an engine without a router entry.
    """
    try:
        return Router(*ROUTERS[engine])
    except KeyError:
        raise ValueError(f"engine must be one of {', '.join(ROUTERS)}, got {engine!r}") from None


@dataclass(frozen=True)
class SharedTier:
    """The shared NFS/pNFS or S3 tier every instance reads and writes.

    Attributes:
        capacity_tb: capacity, TB (10^12 bytes).
        read_gbps_per_node: reloads of returns that hit only the shared tier, GB/s per node.
        write_gbps_per_node: new KV written through, GB/s per node.
        nodes: nodes that mount it.
    """

    capacity_tb: float
    read_gbps_per_node: float
    write_gbps_per_node: float
    nodes: int

    @property
    def gbps_per_node(self) -> float:
        """The network rate a node needs to the tier, GB/s: the larger direction."""
        return max(self.read_gbps_per_node, self.write_gbps_per_node)

    @property
    def gbps_total(self) -> float:
        """What the storage system delivers to all nodes together, GB/s (reads + writes)."""
        return (self.read_gbps_per_node + self.write_gbps_per_node) * self.nodes


@dataclass(frozen=True)
class Cluster:
    """Nodes, replicas and the CPU tier per node.

    Attributes:
        nodes: identical nodes.
        pipeline_nodes: nodes one replica spans (1 without pipeline parallel).
        replicas_per_node: engine replicas with a share on each node.
        replicas_needed: what memory and compute need together.
        cpu_tier_gb_per_node: pinned CPU tier on each node, GB (capped by the slots).
        cpu_tier_capped: True when the nodes' slots hold less than every user's tier.
        users_per_node: users whose conversations a node's instances serve.
    """

    nodes: int
    pipeline_nodes: int
    replicas_per_node: int
    replicas_needed: int
    cpu_tier_gb_per_node: float
    cpu_tier_capped: bool
    users_per_node: int

    @property
    def replicas(self) -> int:
        """Replicas over all nodes (every GPU is used)."""
        return self.nodes // self.pipeline_nodes * self.replicas_per_node

    @property
    def needs_router(self) -> bool:
        """More than one instance: a KV-aware router goes in front."""
        return self.replicas > 1

    @property
    def needs_shared_tier(self) -> bool:
        """More than one node, or users beyond what the CPU tiers hold."""
        return self.nodes > 1 or self.cpu_tier_capped


def plan_cluster(
    *,
    replicas_needed: int,
    gpus_per_replica: int,
    gpus_per_node: int,
    users: int,
    cpu_tier_gb_total: float,
    max_buffer_gb_per_node: float,
    pipeline_nodes: int = 1,
) -> Cluster:
    """How many nodes carry ``replicas_needed`` replicas, and the CPU tier per node.

    Args:
        replicas_needed: replicas that memory and compute need (≥ 1).
        gpus_per_replica: GPUs of one replica on one node: its TP size (≥ 1).
        gpus_per_node: GPUs in a node.
        users: all users; a router spreads them evenly over the nodes.
        cpu_tier_gb_total: the CPU tier every user's conversation would need, GB.
        max_buffer_gb_per_node: :func:`max_buffer_gb_per_node`.
        pipeline_nodes: nodes one replica spans (its pipeline-parallel stages, one per
            node); the nodes come in groups of this many.

    Raises:
        ValueError: if a count is not positive, a replica does not fit in a node, or
            more than :data:`MAX_NODES` nodes would be needed.
    """
    if min(replicas_needed, gpus_per_replica, gpus_per_node, users, pipeline_nodes) < 1:
        raise ValueError("replicas, GPUs and users must be positive")
    if gpus_per_replica > gpus_per_node or gpus_per_node % gpus_per_replica:
        raise ValueError(
            f"replicas of {gpus_per_replica} GPUs do not fill nodes of {gpus_per_node} GPUs"
        )
    per_node = gpus_per_node // gpus_per_replica
    nodes = max(1, math.ceil(replicas_needed / per_node)) * pipeline_nodes
    if nodes > MAX_NODES:
        raise ValueError(f"{nodes:,} nodes needed, more than {MAX_NODES}")
    wanted = cpu_tier_gb_total / nodes
    capped = wanted > max_buffer_gb_per_node + 1e-9
    return Cluster(
        nodes=nodes,
        pipeline_nodes=pipeline_nodes,
        replicas_per_node=per_node,
        replicas_needed=replicas_needed,
        cpu_tier_gb_per_node=min(wanted, max_buffer_gb_per_node),
        cpu_tier_capped=capped,
        users_per_node=math.ceil(users / nodes),
    )


def shared_tier(
    *,
    cluster: Cluster,
    users: int,
    conversation_bytes: int,
    returns_per_s_per_node: float,
    shared_hit_share: float,
    reload_bytes_per_return: float,
    new_kv_bytes_per_s_per_node: float,
) -> SharedTier | None:
    """Size the shared tier, or ``None`` when the cluster needs none.

    Args:
        cluster: from :func:`plan_cluster`.
        users: all users.
        conversation_bytes: one full conversation's KV as the tier stores it, bytes.
        returns_per_s_per_node: returning turns a node serves per second at the busy hour.
        shared_hit_share: share of returns whose KV is only in the shared tier.
        reload_bytes_per_return: KV bytes one such return reads, bytes.
        new_kv_bytes_per_s_per_node: new KV a node writes per second, bytes.

    Raises:
        ValueError: if a rate or share is negative or the share is above 1.
    """
    if min(returns_per_s_per_node, reload_bytes_per_return, new_kv_bytes_per_s_per_node) < 0:
        raise ValueError("rates and bytes must be >= 0")
    if not 0 <= shared_hit_share <= 1:
        raise ValueError(f"shared_hit_share must be between 0 and 1, got {shared_hit_share}")
    if not cluster.needs_shared_tier:
        return None
    read = returns_per_s_per_node * shared_hit_share * reload_bytes_per_return / GB
    return SharedTier(
        capacity_tb=users * conversation_bytes / TB,
        read_gbps_per_node=read,
        write_gbps_per_node=new_kv_bytes_per_s_per_node / GB,
        nodes=cluster.nodes,
    )
