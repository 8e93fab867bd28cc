"""The performance model bound to one replica (:class:`Replica`: model, KV dtype, GPU and
TP) for one workload, kept per model object: the service table of every turn and
outcome, TPOT against the decode batch, the evaluations of replica counts and the
hit-rate windows of the busy-hour stream (:mod:`sizing.serving.serve` composes them into the
plan under traffic).

None of them depends on the tiers' sizes or the nodes, so the plans of one
configuration search that share a GPU type and TP (its TP sizes, DIMM layouts and
shared-tier variants) compute them once; what does depend on the NVMe drives (the hits
of tiers timed by their read rate, :mod:`sizing.serving.tier_reads`) is part of the keys. Each
store is keyed by the model object's id and guarded by the object itself
(:func:`sizing.kept.kept`): catalog specs are shared objects, and a copied spec shares
nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from sizing import performance
from sizing.kept import kept
from sizing.model.spec import ModelSpec
from sizing.performance import ModelShape
from sizing.performance.calibration import missing_path
from sizing.serving.evaluation import Evaluation
from sizing.serving.service_times import ServiceTable, service_table
from sizing.serving.tier_reads import TierReadRates, staged_hit_ms
from sizing.serving.tpot_curve import TpotCurve
from sizing.traffic.hit_rate import ConversationShape
from sizing.traffic.profile import Traffic

ENGINE = "vllm"
"""The engine whose reload measurements time the plan's hits."""


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


_SHAPES: dict[tuple[int, str], tuple[ModelSpec, ModelShape]] = {}


def _model_shape(model: ModelSpec, kv_dtype: str) -> ModelShape:
    """:func:`sizing.performance.model_shape`, kept per model object (building one reads
    the config; catalog specs are shared objects, so a process builds each once)."""
    return kept(
        _SHAPES, model, (id(model), kv_dtype), lambda: performance.model_shape(model, kv_dtype)
    )


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
    times = kept(_TIMES, model, key, dict)

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


class Bound(NamedTuple):
    """The performance model bound to one model, KV dtype, GPU and TP for one workload.

    Attributes:
        table: the service table (:func:`sizing.serving.service_times.service_table`).
        unmeasured: the tiers without a measured reload for :data:`ENGINE`, timed from
            their read rate (:mod:`sizing.serving.tier_reads`).
        tpot_ms: TPOT against the decode batch, ms.
        memo: the evaluations of replica counts (:class:`~sizing.serving.evaluation.Evaluator`'s
        memo).
    """

    table: ServiceTable
    unmeasured: tuple[str, ...]
    tpot_ms: Callable[[float], float]
    memo: dict[Any, Evaluation]


_BOUND: dict[tuple[Any, ...], tuple[ModelSpec, Bound]] = {}

_TABLES: dict[tuple[Any, ...], tuple[ModelSpec, tuple[ServiceTable, tuple[str, ...]]]] = {}
"""The service tables, kept without the users: a table depends on the model, KV dtype,
GPU, TP, conversation shape, shared prompt, read rates and KV bytes per token only, so
the plans of every number of users share it."""

_TPOTS: dict[tuple[Any, ...], tuple[ModelSpec, TpotCurve]] = {}
"""TPOT against the decode batch, kept per model, KV dtype, GPU, TP and context (the
mean tokens of a generating request), whatever the users."""


def bound(
    model: ModelSpec,
    kv_dtype: str,
    replica: Replica,
    shape: ConversationShape,
    shared_prefix_tokens: int,
    load: tuple[Traffic, int, float],
    rates: TierReadRates,
) -> Bound:
    """The :class:`Bound` of ``model`` at ``kv_dtype`` on ``replica``'s GPU and TP for
    one workload: ``shape`` (tokens per turn), ``shared_prefix_tokens``, ``load`` (the
    traffic, the users and the mean tokens of a generating request) and ``rates`` (the
    tiers' read rates).

    Kept per model object (module docstring); the hits from tiers timed by their read
    rate depend on ``rates`` (the NVMe drives and the instances per node) and the KV
    bytes per token, which are part of the key. The service table and TPOT do not depend
    on the users or the traffic's rate: they are kept apart and shared by the bounds of
    every number of users.

    Raises:
        NoMeasuredBasis: the GPU has no measured prefill class.
    """
    key: tuple[Any, ...] = (id(model), kv_dtype, replica.gpu, replica.tensor_parallel_size)
    key += (shape, shared_prefix_tokens, *load, rates, replica.kv_bytes_per_token)

    def build() -> Bound:
        gpu, tp = replica.gpu, replica.tensor_parallel_size
        table_key = (id(model), kv_dtype, gpu, tp, shape, shared_prefix_tokens, rates)
        table, unmeasured = kept(
            _TABLES,
            model,
            (*table_key, replica.kv_bytes_per_token),
            lambda: _table(model, kv_dtype, replica, shape, shared_prefix_tokens, rates),
        )
        context = round(load[2])
        tpot = kept(
            _TPOTS,
            model,
            (id(model), kv_dtype, gpu, tp, context),
            lambda: _tpot(model, kv_dtype, replica, context),
        )
        return Bound(table, unmeasured, tpot, {})

    return kept(_BOUND, model, key, build)


Windows = dict[tuple[float, float], tuple[float, float]]
"""Hit-rate windows and their shares of gaps by (rate of new conversations, capacity)."""

_WINDOWS: dict[tuple[Any, ...], tuple[ModelSpec, Windows]] = {}


def windows(model: ModelSpec, shape: ConversationShape, traffic: Traffic, users: int) -> Windows:
    """The store of hit-rate windows of one workload's busy-hour stream
    (:meth:`sizing.serving.evaluation.Evaluator._window`), kept per shape, traffic and users: they
    depend on the stream and a tier's capacity only, not on the GPU, so the plans of
    every GPU type in a search share them."""
    return kept(_WINDOWS, model, (id(model), shape, traffic, users), dict)


def _tpot(model: ModelSpec, kv_dtype: str, replica: Replica, context_tokens: int) -> TpotCurve:
    """TPOT against the decode batch (:class:`~sizing.serving.tpot_curve.TpotCurve`) of the
    performance model at ``context_tokens``."""
    mshape = _model_shape(model, kv_dtype)
    gpu, tp = replica.gpu, replica.tensor_parallel_size

    def at(batch: int) -> float:
        return performance.tpot_ms(
            mshape, gpu=gpu, tp=tp, batch=batch, context_tokens=context_tokens
        )

    return TpotCurve(at)
