"""The plan under traffic, and each node's NVMe tier once the node count is known.

Rules: the traffic model (:mod:`sizing.serving.serve`) decides the nodes from the targets,
and a node's NVMe tier holds only its own share of the day's new conversations
(:mod:`sizing.memory.nvme`, several nodes); the two are computed against each other here.
"""

from __future__ import annotations

from sizing.memory.nvme import NvmeTier, nvme_tier
from sizing.model.spec import ModelSpec
from sizing.performance import NoMeasuredBasis
from sizing.serving.replica_model import Replica, ReplicaModels
from sizing.serving.serve import Serving, serve
from sizing.units import TB
from sizing.workload import Workload

NVME_NODE_PASSES = 3
"""Times the NVMe tier is resized to the plan's node count and the traffic re-served."""


def nvme_per_node(
    model: ModelSpec,
    workload: Workload,
    replica: Replica,
    buffer_cap_gb: float,
    nvme: NvmeTier,
    serving: Serving,
    max_drives: int,
    replica_models: ReplicaModels,
) -> tuple[Serving, NvmeTier]:
    """The serving and the NVMe tier once each node holds its own share of the day.

    Args:
        model, workload: what the plan sizes.
        replica: one replica of the plan's layout.
        buffer_cap_gb: the most pinned CPU-tier memory one node holds, GB.
        nvme: the NVMe tier as first sized (for one node).
        serving: the plan under traffic with ``nvme``.
        max_drives: NVMe bays of the chassis.
        replica_models: the performance models the plan's request has bound.

    Returns:
        The serving and the per-node NVMe tier that agree on the node count.

    The node count follows from the traffic, and the traffic's NVMe hits from each
    node's tier (:mod:`sizing.memory.nvme`: a node writes only its own conversations), so the
    tier is resized to the nodes and the traffic served again (unless the resized tier has
    the same bytes and read rate, all the traffic sees of it) until both agree, at most
    :data:`NVME_NODE_PASSES` times; if they still differ, the tier is kept for the fewer
    nodes, which gives every node at least its share.
    """

    def sized(nodes: int) -> NvmeTier:
        return nvme_tier(
            new_conversations_per_day=workload.nvme_conversations_per_day,
            conversation_bytes=nvme.conversation_bytes,
            max_drives=max_drives,
            nodes=nodes,
        )

    if nvme.drive is None:
        return serving, nvme
    for _ in range(NVME_NODE_PASSES):
        if serving.cluster.nodes == nvme.nodes:
            return serving, nvme
        resized = sized(serving.cluster.nodes)
        if (resized.capacity_tb, resized.read_gbs) == (nvme.capacity_tb, nvme.read_gbs):
            # The traffic sees only the tier's bytes and read rate: the same serving.
            return serving, resized
        again, _note = serve_plan(
            model, workload, replica, buffer_cap_gb, resized, replica_models=replica_models
        )
        if again is None:
            break
        serving, nvme = again, resized
    if serving.cluster.nodes < nvme.nodes:
        nvme = sized(serving.cluster.nodes)
    return serving, nvme


def serve_plan(
    model: ModelSpec,
    workload: Workload,
    replica: Replica,
    buffer_cap_gb: float,
    nvme: NvmeTier,
    *,
    tiers: bool = True,
    replica_models: ReplicaModels | None = None,
) -> tuple[Serving | None, str]:
    """The plan under traffic (:func:`sizing.serving.serve.serve`) with ``nvme`` as each
    node's NVMe tier, or ``None`` and why when the GPU has no measured basis
    (:class:`~sizing.performance.NoMeasuredBasis`); ``tiers=False`` serves it without
    any offload tier; ``replica_models`` are the performance models the plan's request
    has bound."""
    try:
        serving = serve(
            model=model,
            kv_dtype=workload.kv_dtype,
            replica=replica,
            traffic=workload.traffic,
            users=workload.users,
            context_tokens=workload.context_tokens,
            shared_prefix_tokens=workload.shared_prompt_tokens,
            nvme_bytes_per_node=nvme.capacity_tb * TB,
            nvme_read_gbs_per_node=nvme.read_gbs,
            max_buffer_gb_per_node=buffer_cap_gb,
            tiers=tiers,
            with_shared_tier=not workload.without_shared_tier,
            replica_models=replica_models,
        )
    except NoMeasuredBasis as exc:
        return None, exc.message
    return serving, ""
