"""The performance model bound to one replica (:class:`Replica`: model, KV dtype, GPU and
TP) for one workload: the service table of every turn and outcome, TPOT against the
decode batch, the evaluations of replica counts and the hit-rate windows of the
busy-hour stream (:mod:`sizing.serving.serve` composes them into the plan under traffic).

None of them depends on the tiers' sizes or the nodes, so the plans of one request or
one configuration search that share a GPU type and TP (its TP sizes, DIMM layouts and
shared-tier variants) compute them once: the caller creates a :class:`ReplicaModels`
for the request or the search and passes it down. What does depend on the NVMe drives
(the hits of tiers timed by their read rate, :mod:`sizing.serving.tier_reads`) is part
of the keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from sizing import performance
from sizing.model.spec import ModelSpec
from sizing.performance import ModelShape
from sizing.performance.calibration import missing_path
from sizing.serving.evaluation import Evaluation
from sizing.serving.service_times import ServiceTable, TurnTimes, service_table
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


Windows = dict[tuple[float, float], tuple[float, float]]
"""Hit-rate windows and their shares of gaps by (rate of new conversations, capacity)."""


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


class ReplicaModels:
    """The performance models bound to the replicas of one request's or one search's
    plans, by the inputs each depends on (every key starts with the model, compared by
    value): created by the caller for one request or search and dropped with it.

    Attributes:
        tables: the service tables and their unmeasured tiers per model, KV dtype, GPU,
            TP, conversation shape, shared prompt, read rates and KV bytes per token,
            whatever the users (one object per search, so the plans that share it share
            the moments it keeps too; its times come from :func:`turn_times`).
        tpots: TPOT against the decode batch per model, KV dtype, GPU, TP and context
            (the mean tokens of a generating request), whatever the users.
        bounds: the :class:`Bound` of each workload (its traffic and users too).
        windows: the hit-rate windows of each busy-hour stream (shape, traffic, users),
            shared by every GPU type.
    """

    def __init__(self) -> None:
        self.tables: dict[tuple[Any, ...], tuple[ServiceTable, tuple[str, ...]]] = {}
        self.tpots: dict[tuple[Any, ...], TpotCurve] = {}
        self.bounds: dict[tuple[Any, ...], Bound] = {}
        self.windows: dict[tuple[Any, ...], Windows] = {}

    def bound(
        self,
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
        traffic, the users and the mean tokens of a generating request) and ``rates``
        (the tiers' read rates).

        The hits from tiers timed by their read rate depend on ``rates`` (the NVMe
        drives and the instances per node) and the KV bytes per token, which are part
        of the key. The service table and TPOT do not depend on the users or the
        traffic's rate: they are kept apart and shared by the bounds of every number of
        users.

        Raises:
            NoMeasuredBasis: the GPU has no measured prefill class.
        """
        gpu, tp = replica.gpu, replica.tensor_parallel_size
        per_turn = (model, kv_dtype, gpu, tp, shape, shared_prefix_tokens)
        key = (*per_turn, *load, rates, replica.kv_bytes_per_token)
        found = self.bounds.get(key)
        if found is not None:
            return found
        table_key = (*per_turn, rates, replica.kv_bytes_per_token)
        table = self.tables.get(table_key)
        if table is None:
            rows, outcomes, unmeasured = turn_times(*table_key)
            table = self.tables[table_key] = (ServiceTable(rows, outcomes), unmeasured)
        tpot_key = (model, kv_dtype, gpu, tp, round(load[2]))
        tpot = self.tpots.get(tpot_key)
        if tpot is None:
            tpot = self.tpots[tpot_key] = _tpot(model, kv_dtype, replica, tpot_key[-1])
        found = self.bounds[key] = Bound(*table, tpot, {})
        return found

    def windows_of(
        self, model: ModelSpec, shape: ConversationShape, traffic: Traffic, users: int
    ) -> Windows:
        """The store of hit-rate windows of one workload's busy-hour stream
        (:meth:`sizing.serving.evaluation.Evaluator._window`), per shape, traffic and
        users: they depend on the stream and a tier's capacity only, not on the GPU, so
        the plans of every GPU type in a search share them."""
        return self.windows.setdefault((model, shape, traffic, users), {})


@lru_cache(maxsize=256)
def turn_times(
    model: ModelSpec,
    kv_dtype: str,
    gpu: str,
    tp: int,
    shape: ConversationShape,
    shared_prefix_tokens: int,
    rates: TierReadRates,
    kv_bytes_per_token: int,
) -> tuple[tuple[TurnTimes, ...], tuple[tuple[float, float, int], ...], tuple[str, ...]]:
    """The rows and outcomes of the service table
    (:func:`~sizing.serving.service_times.service_table`) of ``model`` at ``kv_dtype`` on
    ``gpu`` at TP ``tp`` for ``shape`` with a ``shared_prefix_tokens`` prompt, the tiers
    timed from their read rate in ``rates`` at ``kv_bytes_per_token``, and those tiers.

    A pure function of frozen inputs, cached for the 256 latest: the plans of one
    workload with another number of users, and of a configuration search's GPU types and
    TP sizes, evaluate the performance model once per turn. The rows and outcomes are
    immutable; each caller builds its own table from them.

    Raises:
        NoMeasuredBasis: the GPU has no measured prefill class.
    """
    mshape = performance.model_shape(model, kv_dtype)
    unmeasured = tuple(t for t in ("nvme", "shared") if missing_path(ENGINE, t))
    times: dict[Any, float] = {}

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
            kv_bytes_per_token=kv_bytes_per_token,
            read_gbs=rates.rate(tier),
        )

    table = service_table(
        shape=shape, shared_prefix_tokens=shared_prefix_tokens, miss_ms=miss_ms, hit_ms=hit_ms
    )
    return table.rows, table.outcomes, unmeasured


@dataclass(frozen=True)
class _TpotAt:
    """The performance model's TPOT at an integer decode batch, ms (a value rather than a
    closure, so a plan holding its curve can be pickled into a cache)."""

    mshape: ModelShape
    gpu: str
    tp: int
    context_tokens: int

    def __call__(self, batch: int) -> float:
        return performance.tpot_ms(
            self.mshape, gpu=self.gpu, tp=self.tp, batch=batch, context_tokens=self.context_tokens
        )


def _tpot(model: ModelSpec, kv_dtype: str, replica: Replica, context_tokens: int) -> TpotCurve:
    """TPOT against the decode batch (:class:`~sizing.serving.tpot_curve.TpotCurve`) of the
    performance model at ``context_tokens``."""
    mshape = performance.model_shape(model, kv_dtype)
    return TpotCurve(_TpotAt(mshape, replica.gpu, replica.tensor_parallel_size, context_tokens))
