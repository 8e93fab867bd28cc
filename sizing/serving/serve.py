"""The plan under the customer's traffic: hit rates, GPUs for the load, nodes, the shared
tier and what the offload tier buys, composed for :func:`sizing.plan.orchestrator.make_plan`.

It takes the performance model (:mod:`sizing.performance`) bound to one model, GPU, TP
size and engine, evaluated once per turn into a :class:`~sizing.serving.service_times.ServiceTable`
(:mod:`sizing.serving.replica_model`, shared through the caller's
:class:`~sizing.serving.replica_model.ReplicaModels`), and hands it with the tiers'
capacities to :mod:`sizing.serving.replicas`, :mod:`sizing.layout.cluster` and
:mod:`sizing.serving.benefit`,
for the targets of :mod:`sizing.serving.targets`. Rules and sources are in those
modules' docstrings; this one only decides what goes in:

- Reloads are timed for vLLM's native offloading connector, the engine the plan's
  flags are written for. A tier without a measured reload for it (NVMe and shared
  tiers: ``sizing/data/performance.json``) is timed from its read rate on top of the
  CPU-tier hit (:mod:`sizing.serving.tier_reads`, "no measured basis"), so its hits lower TTFT
  and prefill work; the plan names those tiers (``unmeasured_tiers``).
- The GPU prefix cache of a replica is its KV pool; the CPU tier holds every user's
  conversation (seed), split over the replicas and capped by each node's DIMM slots;
  the NVMe tier is its drives' capacity; the shared tier holds every user once.
- TPOT is the performance model's at the mean context of a generating request,
  evaluated at batches 1, 2, 4, … and interpolated linearly between them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sizing.layout.cluster import (
    MAX_NODES,
    Cluster,
    Router,
    SharedTier,
    plan_cluster,
    router_for,
    shared_tier,
)
from sizing.model.spec import ModelSpec
from sizing.serving import targets as serving_targets
from sizing.serving.benefit import MIN_TIER_HITS, Benefit, judge
from sizing.serving.evaluation import Capacities, Evaluation, Evaluator
from sizing.serving.replica_model import ENGINE, Replica, ReplicaModels
from sizing.serving.replicas import Scale, scale
from sizing.serving.tier_reads import read_rates
from sizing.traffic.assumptions import Assumption, stated
from sizing.traffic.hit_rate import ConversationShape, TierHits
from sizing.traffic.profile import (
    DEFAULT_TPOT_MS,
    DEFAULT_TTFT_P95_MS,
    Traffic,
    busy_hour_stream,
    conversation_shape,
    gaps,
    validate_targets,
)
from sizing.traffic.return_gaps import GapDistribution
from sizing.units import GB
from sizing.verdict import Note


@dataclass(frozen=True)
class Serving:
    """The plan under traffic.

    Attributes:
        shape: tokens per turn.
        gaps: time between turns.
        requests_per_s: busy-hour requests over the whole plan, per s.
        scale: replicas with and without a tier (:class:`~sizing.serving.replicas.Scale`).
        final: the plan's replicas at the busy hour, with the shared tier when there is
            one (its hits and load).
        cluster: nodes and the CPU tier per node.
        router: the KV-aware router, when there is more than one replica.
        shared: the shared tier, when the plan needs one.
        benefit: the verdict's figures.
        assumptions: the traffic defaults relied on, in English.
        assumption_notes: the same as codes with their figures, for a page to word.
        unmeasured_tiers: tiers whose hits are timed from their read rate, with no
            measured basis (:mod:`sizing.serving.tier_reads`).
        ttft_p95_target_ms, tpot_target_ms: the customer's targets (typed or default).
        ttft_p95_sized_ms, tpot_sized_ms: the targets the plan is sized for: the
            customer's, or a relaxed one (:func:`sizing.serving.targets.targets`).
        target_notes: the targets relaxed, with the time one request takes without load.
        ttft_p95_floor_ms, tpot_floor_ms: what one request takes without any load
            (the floor of :func:`sizing.serving.targets.targets`).
        evaluator: evaluates other replica counts and tier sizes of this workload
            (the charts use it).
    """

    shape: ConversationShape
    gaps: GapDistribution
    requests_per_s: float
    scale: Scale
    final: Evaluation
    cluster: Cluster
    router: Router | None
    shared: SharedTier | None
    benefit: Benefit
    assumptions: tuple[str, ...]
    unmeasured_tiers: tuple[str, ...]
    ttft_p95_target_ms: float = DEFAULT_TTFT_P95_MS
    tpot_target_ms: float = DEFAULT_TPOT_MS
    ttft_p95_sized_ms: float = DEFAULT_TTFT_P95_MS
    tpot_sized_ms: float = DEFAULT_TPOT_MS
    ttft_p95_floor_ms: float = 0.0
    tpot_floor_ms: float = 0.0
    target_notes: tuple[Note, ...] = ()
    assumption_notes: tuple[Assumption, ...] = ()
    evaluator: Evaluator | None = field(default=None, compare=False, repr=False)

    @property
    def hits(self) -> TierHits:
        """Where returns find their KV in the plan."""
        return self.final.hits

    @property
    def meets_targets(self) -> bool:
        """True when the busy hour's TTFT p95 and TPOT are within the customer's targets."""
        load = self.final.load
        return load.ttft_p95_ms <= self.ttft_p95_target_ms and load.tpot_ms <= self.tpot_target_ms


def serve(
    *,
    model: ModelSpec,
    kv_dtype: str,
    replica: Replica,
    traffic: Traffic,
    users: int,
    context_tokens: int,
    shared_prefix_tokens: int,
    nvme_bytes_per_node: float,
    max_buffer_gb_per_node: float,
    tiers: bool = True,
    with_shared_tier: bool = True,
    nvme_read_gbs_per_node: float = 0.0,
    replica_models: ReplicaModels | None = None,
) -> Serving:
    """Size the plan for the traffic.

    Args:
        model, kv_dtype: the model and its KV dtype.
        replica: one replica of the memory plan.
        traffic: the customer's traffic and targets.
        users: all users.
        context_tokens: the context of a conversation, shared prompt included.
        shared_prefix_tokens: the shared system prompt.
        nvme_bytes_per_node: the NVMe tier of one node, bytes (0: none).
        max_buffer_gb_per_node: the largest CPU tier a node's slots hold, GB.
        tiers: False for a plan that sells no offload tier (the GPUs the targets then
            need; hit rates from the GPU prefix cache only).
        with_shared_tier: False for a plan without a shared tier (each node's CPU and NVMe
            tiers only; returns beyond them are recomputed).
        nvme_read_gbs_per_node: the node's NVMe drives' sequential read rate, GB/s
            (0: no NVMe tier; :mod:`sizing.serving.tier_reads`).
        replica_models: the performance models the other plans of the caller's request
            or search have bound (a new one when not given).

    Raises:
        SizingError: an input of ``traffic`` out of range (field named).
        NoMeasuredBasis: the GPU has no measured prefill class.
        InfeasibleError: no plan within the node limit meets the targets.
    """
    validate_targets(traffic)
    unique = context_tokens - shared_prefix_tokens
    shape = conversation_shape(traffic, unique)
    gap = gaps(traffic)
    stream = busy_hour_stream(traffic, users=users, shape=shape, gap=gap)
    rates = read_rates(
        nvme_read_gbs_per_node=nvme_read_gbs_per_node,
        instances_per_node=replica.replicas_per_node,
    )
    mean_tokens = shared_prefix_tokens + shape.prompt_tokens_total / shape.turns
    mean_tokens += shape.output_tokens / 2
    models = ReplicaModels() if replica_models is None else replica_models
    table, unmeasured, tpot, memo = models.bound(
        model, kv_dtype, replica, shape, shared_prefix_tokens, (traffic, users, mean_tokens), rates
    )
    bpt = replica.kv_bytes_per_token
    per_node = replica.replicas_per_node
    capacities = Capacities(
        pool_tokens_per_replica=replica.pool_tokens,
        cpu_tokens_total=users * unique,
        cpu_tokens_max_per_replica=max_buffer_gb_per_node * GB / bpt / per_node,
        nvme_tokens_per_replica=nvme_bytes_per_node / bpt / per_node,
        shared_tokens=0.0,
    )
    evaluator = Evaluator(
        stream=stream,
        table=table,
        capacities=capacities,
        tpot_ms=tpot,
        mean_request_tokens=mean_tokens,
        memo=memo,
        windows=models.windows_of(model, shape, traffic, users),
    )
    groups = max(1, MAX_NODES // replica.nodes_per_group)
    unloaded = evaluator(groups * per_node, tiers=tiers)
    if unloaded.load.overloaded:
        raise serving_targets.too_many_nodes(users)
    ttft_target, tpot_target, notes = serving_targets.targets(traffic, unloaded)
    sc = scale(
        evaluator,
        ttft_p95_ms=ttft_target,
        tpot_ms=tpot_target,
        replicas_per_node=per_node,
        tiers=tiers,
        max_nodes=groups,
    )
    if sc.replicas_for_compute is None:
        raise serving_targets.too_many_nodes(users)
    cluster = plan_cluster(
        replicas_needed=sc.final.replicas,
        gpus_per_replica=replica.tensor_parallel_size,
        gpus_per_node=replica.tensor_parallel_size * per_node,
        users=users,
        cpu_tier_gb_total=users * unique * bpt / GB if tiers else 0.0,
        max_buffer_gb_per_node=max_buffer_gb_per_node,
        pipeline_nodes=replica.nodes_per_group,
    )
    final = sc.final
    shared = None
    if tiers and with_shared_tier and cluster.needs_shared_tier:
        # The shared tier is sold only where returns reach it: with the KV-aware router
        # each returns to its own instance, so it takes only what the node's CPU and NVMe
        # tiers do not hold; below MIN_TIER_HITS of the returns it is not sold, as a CPU
        # tier is not (sizing.serving.benefit).
        evaluator.cap = replace(capacities, shared_tokens=float(users * unique))
        pooled = evaluator(final.replicas)
        if pooled.hits.shared < MIN_TIER_HITS:
            evaluator.cap = capacities
        else:
            final = pooled
            returns_per_node = stream.turns_per_s * (shape.turns - 1) / shape.turns / cluster.nodes
            mean_history = shape.cacheable_tokens_total / max(1, shape.turns - 1)
            shared = shared_tier(
                cluster=cluster,
                users=users,
                conversation_bytes=unique * bpt,
                returns_per_s_per_node=returns_per_node,
                shared_hit_share=final.hits.shared,
                reload_bytes_per_return=mean_history * bpt,
                new_kv_bytes_per_s_per_node=stream.new_tokens_per_s * bpt / cluster.nodes,
            )
    notes_of_defaults, assumptions = stated(traffic, shape, gap, (ttft_target, tpot_target))
    benefit = judge(
        scale=replace(sc, final=final),
        table=table,
        users=users,
        conversations_per_replica=replica.conversations,
        gpus_per_replica=replica.gpus_per_replica,
        turns=shape.turns,
    )
    return Serving(
        shape=shape,
        gaps=gap,
        requests_per_s=stream.turns_per_s,
        scale=sc,
        final=final,
        cluster=cluster,
        router=router_for(ENGINE) if final.replicas > 1 else None,
        shared=shared,
        benefit=benefit,
        assumptions=assumptions,
        assumption_notes=notes_of_defaults,
        unmeasured_tiers=unmeasured,
        ttft_p95_target_ms=traffic.ttft_p95_ms,
        tpot_target_ms=traffic.tpot_ms,
        ttft_p95_sized_ms=ttft_target,
        tpot_sized_ms=tpot_target,
        ttft_p95_floor_ms=unloaded.load.ttft_p95_ms,
        tpot_floor_ms=unloaded.load.tpot_ms,
        target_notes=notes,
        evaluator=evaluator,
    )
