"""The plan under the customer's traffic: hit rates, GPUs for the load, nodes, the shared
tier and what the offload tier buys, composed for :func:`sizing.plan.make_plan`.

It binds the performance model (:mod:`sizing.performance`) to one model, GPU, TP size and
engine, evaluates it once per turn into a :class:`~sizing.load.ServiceTable`, and hands
it with the tiers' capacities to :mod:`sizing.scale`, :mod:`sizing.cluster` and
:mod:`sizing.benefit`. Rules and sources are in those modules' docstrings; this one
only decides what goes in:

- Reloads are timed for vLLM's native offloading connector, the engine the plan's
  flags are written for. A tier without a measured reload for it (NVMe and shared
  tiers: ``sizing/data/performance.json``) is timed from its read rate on top of the
  CPU-tier hit (:mod:`sizing.tier_reads`, "no measured basis"), so its hits lower TTFT
  and prefill work; the plan names those tiers (``unmeasured_tiers``).
- The GPU prefix cache of a replica is its KV pool; the CPU tier holds every user's
  conversation (seed), split over the replicas and capped by each node's DIMM slots;
  the NVMe tier is its drives' capacity; the shared tier holds every user once.
- TPOT is the performance model's at the mean context of a generating request,
  evaluated at batches 1, 2, 4, … and interpolated linearly between them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from sizing import performance
from sizing.benefit import Benefit, judge
from sizing.cluster import (
    MAX_NODES,
    Cluster,
    Router,
    SharedTier,
    plan_cluster,
    router_for,
    shared_tier,
)
from sizing.errors import Fix, InfeasibleError, gettext_noop
from sizing.hit_rate import ConversationShape, TierHits
from sizing.load import ServiceTable, service_table
from sizing.model import ModelSpec
from sizing.performance import ModelShape
from sizing.performance.calibration import missing_path
from sizing.return_gaps import GapDistribution
from sizing.scale import Capacities, Evaluation, Evaluator, Scale, scale
from sizing.tier_reads import TierReadRates, read_rates, staged_hit_ms
from sizing.traffic import (
    DEFAULT_TPOT_MS,
    DEFAULT_TTFT_P95_MS,
    Assumption,
    Traffic,
    assumption_notes,
    busy_hour_stream,
    conversation_shape,
    gaps,
    validate_targets,
)
from sizing.units import GB
from sizing.verdict import Note

ENGINE = "vllm"
"""The engine whose reload measurements time the plan's hits."""

T = TypeVar("T")

_KEPT_MAX = 256
"""Entries a per-model store keeps before it starts again: a configuration search binds
about 160 (GPU, TP) combinations of one workload."""


def _kept(
    store: dict[Any, tuple[ModelSpec, T]], model: ModelSpec, key: Any, build: Callable[[], T]
) -> T:
    """``build()``, kept in ``store`` under ``key`` for the model object ``model`` (keys
    start with ``id(model)``; the stored object guards against a reused id). The store
    starts again once it holds :data:`_KEPT_MAX` entries."""
    hit = store.get(key)
    if hit is None or hit[0] is not model:
        if len(store) >= _KEPT_MAX:
            store.clear()
        hit = store[key] = (model, build())
    return hit[1]


_SHAPES: dict[tuple[int, str], tuple[ModelSpec, ModelShape]] = {}


def _model_shape(model: ModelSpec, kv_dtype: str) -> ModelShape:
    """:func:`sizing.performance.model_shape`, kept per model object (building one reads
    the config; catalog specs are shared objects, so a process builds each once)."""
    return _kept(
        _SHAPES, model, (id(model), kv_dtype), lambda: performance.model_shape(model, kv_dtype)
    )


@dataclass(frozen=True)
class Replica:
    """What one replica of the memory plan holds and runs on.

    Attributes:
        gpu: catalog slug.
        tensor_parallel_size: TP of the replica.
        gpus_per_replica: TP × PP.
        replicas_per_node: replicas per node (per node group with PP).
        nodes_per_group: nodes one replica spans (PP; 1 without).
        pool_tokens: the replica's KV pool, tokens of conversation (shared prompt aside).
        conversations: max-length conversations the pool holds.
        kv_bytes_per_token: KV bytes one token of a conversation takes in a tier.
        gpu_memory_gb_per_node: the node's GPU memory (the host-memory reserve), GB.
    """

    gpu: str
    tensor_parallel_size: int
    gpus_per_replica: int
    replicas_per_node: int
    nodes_per_group: int
    pool_tokens: float
    conversations: int
    kv_bytes_per_token: int
    gpu_memory_gb_per_node: float


@dataclass(frozen=True)
class Serving:
    """The plan under traffic.

    Attributes:
        shape: tokens per turn.
        gaps: time between turns.
        requests_per_s: busy-hour requests over the whole plan, per s.
        scale: replicas with and without a tier (:class:`~sizing.scale.Scale`).
        final: the plan's replicas at the busy hour, with the shared tier when there is
            one (its hits and load).
        cluster: nodes and the CPU tier per node.
        router: the KV-aware router, when there is more than one replica.
        shared: the shared tier, when the plan needs one.
        benefit: the verdict's figures.
        assumptions: the traffic defaults relied on, in English.
        assumption_notes: the same as codes with their figures, for a page to word.
        unmeasured_tiers: tiers whose hits are timed from their read rate, with no
            measured basis (:mod:`sizing.tier_reads`).
        ttft_p95_target_ms, tpot_target_ms: the targets the plan is sized for.
        target_notes: a default target one request cannot meet at this context, and
            the target used instead.
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
    target_notes: tuple[Note, ...] = ()
    assumption_notes: tuple[Assumption, ...] = ()
    evaluator: Evaluator | None = field(default=None, compare=False, repr=False)

    @property
    def hits(self) -> TierHits:
        """Where returns find their KV in the plan."""
        return self.final.hits


_TIMES: dict[tuple[Any, ...], tuple[ModelSpec, dict[Any, float]]] = {}
"""The performance model's TTFT of each turn (a miss by prompt; a hit by tier, prompt
and cached prefix), kept per model, KV dtype, GPU, TP and conversation shape: they do
not depend on the read rates, so the tables of a layout with and without NVMe drives
share them, and the tiers timed from their read rate reuse the CPU tier's hit."""


def _table(
    model: ModelSpec,
    kv_dtype: str,
    replica: Replica,
    shape: ConversationShape,
    shared_prefix_tokens: int,
    rates: TierReadRates,
) -> tuple[ServiceTable, tuple[str, ...]]:
    mshape = _model_shape(model, kv_dtype)
    gpu, tp = replica.gpu, replica.tensor_parallel_size
    unmeasured = tuple(t for t in ("nvme", "shared") if missing_path(ENGINE, t))
    key = (id(model), kv_dtype, gpu, tp, shape, shared_prefix_tokens)
    times = _kept(_TIMES, model, key, dict)

    def miss_ms(prompt: int) -> float:
        if prompt not in times:
            times[prompt] = performance.ttft_miss_ms(mshape, gpu=gpu, tp=tp, prompt_tokens=prompt)
        return times[prompt]

    def measured_ms(tier: str, prompt: int, cached: int) -> float:
        if (tier, prompt, cached) not in times:
            times[tier, prompt, cached] = performance.ttft_hit_ms(
                mshape,
                engine=ENGINE,
                tier=tier,
                gpu=gpu,
                tp=tp,
                prompt_tokens=prompt,
                cached_tokens=cached,
            )
        return times[tier, prompt, cached]

    def hit_ms(tier: str, prompt: int, cached: int) -> float | None:
        cached = min(cached, prompt - 1)
        ms = measured_ms("cpu" if tier in unmeasured else tier, prompt, cached)
        if tier not in unmeasured:
            return ms
        return staged_hit_ms(
            cpu_hit_ms=ms,
            cached_tokens=max(0, cached - shared_prefix_tokens),  # the prompt stays on GPU
            kv_bytes_per_token=replica.kv_bytes_per_token,
            read_gbs=rates.rate(tier),
        )

    table = service_table(
        shape=shape, shared_prefix_tokens=shared_prefix_tokens, miss_ms=miss_ms, hit_ms=hit_ms
    )
    return table, unmeasured


_BOUND: dict[tuple[Any, ...], tuple[ModelSpec, _Bound]] = {}

_Bound = tuple[ServiceTable, tuple[str, ...], Callable[[float], float], dict[Any, Evaluation]]


def _bound(
    model: ModelSpec,
    kv_dtype: str,
    replica: Replica,
    shape: ConversationShape,
    shared_prefix_tokens: int,
    load: tuple[Traffic, int, float],
    rates: TierReadRates,
) -> _Bound:
    """The performance model bound to one model, KV dtype, GPU and TP for one workload:
    the service table, the tiers without a measured reload, TPOT against the batch and
    the evaluations of replica counts (:class:`~sizing.scale.Evaluator`'s memo).

    None of them depends on the tiers' sizes or the nodes, so plans of the same GPU and
    TP for the same traffic (a configuration search) compute them once; the hits from
    tiers timed by their read rate depend on ``rates`` (the NVMe drives and the
    instances per node) and the KV bytes per token, which are part of the key. Kept per
    model object like :func:`_model_shape` (:func:`_kept`)."""
    key: tuple[Any, ...] = (id(model), kv_dtype, replica.gpu, replica.tensor_parallel_size)
    key += (shape, shared_prefix_tokens, *load, rates, replica.kv_bytes_per_token)

    def build() -> _Bound:
        table, unmeasured = _table(model, kv_dtype, replica, shape, shared_prefix_tokens, rates)
        return (table, unmeasured, _tpot(model, kv_dtype, replica, round(load[2])), {})

    return _kept(_BOUND, model, key, build)


_WINDOWS: dict[tuple[Any, ...], tuple[ModelSpec, dict[tuple[float, float], float]]] = {}
"""The hit-rate windows of one workload's busy-hour stream (:meth:`sizing.scale.Evaluator.
_window`), kept per shape, traffic and users: they depend on the stream and a tier's
capacity only, not on the GPU, so the plans of every GPU type in a search share them."""


def _tpot(
    model: ModelSpec, kv_dtype: str, replica: Replica, context_tokens: int
) -> Callable[[float], float]:
    """TPOT against the decode batch: the performance model at batches 1, 2, 4, … and
    straight lines between them (TPOT is a maximum of terms linear in the batch, bent
    only where a MoE model's touched experts grow)."""
    mshape = _model_shape(model, kv_dtype)
    cache: dict[int, float] = {}

    def at(batch: int) -> float:
        if batch not in cache:
            cache[batch] = performance.tpot_ms(
                mshape,
                gpu=replica.gpu,
                tp=replica.tensor_parallel_size,
                batch=batch,
                context_tokens=context_tokens,
            )
        return cache[batch]

    def tpot_ms(batch: float) -> float:
        if not math.isfinite(batch):
            return math.inf
        if batch <= 1:
            return at(1)
        low = 1 << (math.floor(math.log2(batch)))
        if low == batch:
            return at(low)
        high = 2 * low
        return at(low) + (batch - low) / (high - low) * (at(high) - at(low))

    return tpot_ms


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
            (0: no NVMe tier; :mod:`sizing.tier_reads`).

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
    table, unmeasured, tpot, memo = _bound(
        model, kv_dtype, replica, shape, shared_prefix_tokens, (traffic, users, mean_tokens), rates
    )
    windows = _kept(_WINDOWS, model, (id(model), shape, traffic, users), dict)
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
        windows=windows,
    )
    groups = max(1, MAX_NODES // replica.nodes_per_group)
    unloaded = evaluator(groups * per_node, tiers=tiers)
    if unloaded.load.overloaded:
        raise _too_many_nodes(users)
    one_node = evaluator(per_node, tiers=tiers, memory=False)
    typical = (
        table.moments(one_node.hits)[2] + evaluator.tpot_ms(1.0),
        evaluator.tpot_ms(one_node.load.decode_batch if not one_node.load.overloaded else 1.0),
    )
    ttft_target, tpot_target, notes = _targets(traffic, unloaded, typical)
    sc = scale(
        evaluator,
        ttft_p95_ms=ttft_target,
        tpot_ms=tpot_target,
        replicas_per_node=per_node,
        tiers=tiers,
        max_nodes=groups,
    )
    if sc.replicas_for_compute is None:
        raise _too_many_nodes(users)
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
        evaluator.cap = replace(capacities, shared_tokens=float(users * unique))
        final = evaluator(final.replicas)
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
    notes_of_defaults = assumption_notes(traffic, shape, gap)
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
        assumptions=tuple(a.text for a in notes_of_defaults),
        assumption_notes=notes_of_defaults,
        unmeasured_tiers=unmeasured,
        ttft_p95_target_ms=ttft_target,
        tpot_target_ms=tpot_target,
        target_notes=notes,
        evaluator=evaluator,
    )


def _too_many_nodes(users: int) -> InfeasibleError:
    """The error when even :data:`~sizing.cluster.MAX_NODES` nodes cannot carry the load."""
    return InfeasibleError(
        "users",
        template=gettext_noop(
            "the load of %(users)s users needs more than %(max_nodes)s nodes to meet the targets"
        ),
        binding="nodes",
        fixes=(Fix("fewer_users"), Fix("shorter_context")),
        names_fixes=True,
        code="nodes_above_limit",
        values={"users": users, "max_nodes": MAX_NODES},
    )


RELAXED_TARGET_FACTOR = 1.5
"""A default target below what one request takes without load is replaced by this
multiple of that time (a planning choice, stated in the plan's warnings)."""


def _targets(
    traffic: Traffic, unloaded: Evaluation, typical: tuple[float, float]
) -> tuple[float, float, tuple[Note, ...]]:
    """The targets to size for: the customer's, or for a default that a request on one
    node cannot meet even without queueing (``typical``: TTFT p95 and TPOT of one node's
    hit rates, no wait), :data:`RELAXED_TARGET_FACTOR` × that time.

    Raises:
        InfeasibleError: on ``ttft_p95_ms`` or ``tpot_ms`` when a target the customer
            set is below what one request takes without any load.
    """
    out = []
    notes = []
    for key, name, target, default, floor, usual in (
        (
            "ttft_p95_ms",
            "TTFT p95",
            traffic.ttft_p95_ms,
            DEFAULT_TTFT_P95_MS,
            unloaded.load.ttft_p95_ms,
            typical[0],
        ),
        (
            "tpot_ms",
            "TPOT",
            traffic.tpot_ms,
            DEFAULT_TPOT_MS,
            unloaded.load.tpot_ms,
            typical[1],
        ),
    ):
        if target == default and usual > target:
            floor = usual
        elif floor <= target:
            out.append(target)
            continue
        if target != default:
            # a target under 10 ms keeps two significant digits (0.001 ms, not 0 ms)
            target_ms = round(target) if target >= 10 else float(f"{target:.2g}")
            raise InfeasibleError(
                key,
                template=gettext_noop(
                    "the %(target)s target of %(target_ms)s ms is below what one request "
                    "takes without any load (%(floor_ms)s ms)"
                ),
                binding=name,
                fixes=(Fix(f"longer_{key[:-3]}"), Fix("shorter_context"), Fix("faster_gpu")),
                names_fixes=True,
                code="target_below_unloaded",
                values={"target": name, "target_ms": target_ms, "floor_ms": round(floor)},
            )
        used = RELAXED_TARGET_FACTOR * floor
        out.append(used)
        notes.append(
            Note(
                "target_relaxed",
                (
                    ("target", name),
                    ("default_ms", round(default)),
                    ("floor_ms", round(floor)),
                    ("used_ms", round(used)),
                ),
            )
        )
    return out[0], out[1], tuple(notes)
