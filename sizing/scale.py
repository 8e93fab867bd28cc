"""GPUs for the load: replicas = the larger of what memory needs and what compute needs,
with and without an offload tier, on whole nodes.

Procedure (sources of each rule in the modules it calls):

1. **Compute.** The smallest number of replicas ``R`` at which one replica, serving
   ``1/R`` of the busiest hour's requests (a KV-aware router spreads the users evenly and
   keeps each conversation on its replica), meets the TTFT p95 and TPOT targets
   (:mod:`sizing.load`). More replicas lower each one's load and give each the same
   GPU cache for fewer conversations, so the check is monotone in ``R`` and a binary
   search finds it.
2. **Memory.** Each replica's KV pool must hold its decode batch (requests generating
   at once, at their mean length); the weights and one max-length request fix the
   replica's GPUs (:mod:`sizing.gpu`). The users a customer says are active at the same
   moment stay a check of the memory plan (:mod:`sizing.verdict`).
3. **Nodes.** ``max(memory, compute)`` replicas on whole nodes (:mod:`sizing.cluster`);
   the plan is evaluated again at that count for its TTFT p95 and TPOT.
4. **Without a tier.** The same search with only the GPU prefix cache, for the
   replicas that reach the tiered plan's TTFT p95: the GPUs the tier saves. It tries
   whole nodes only (the answer is rounded up to them) and starts from a floor: the
   fewest replicas whose whole pools keep the share of returns on the GPU without
   which the service time's 95th percentile alone exceeds that TTFT
   (:meth:`Evaluator.no_tier_floor`).

Hit rates per replica come from :mod:`sizing.hit_rate`: the GPU cache is the pool less
the decode batch, the CPU tier is the plan's tier split over the replicas (capped by
each node's slots), NVMe per replica, and the shared tier is pooled over all replicas.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sizing.cluster import MAX_NODES
from sizing.hit_rate import (
    ReferenceStream,
    TierHits,
    hit_rates,
    tier_tokens_for_hit_rate,
    window_s,
)
from sizing.load import ReplicaLoad, ServiceTable, replica_load


@dataclass(frozen=True)
class Capacities:
    """What the tiers hold, tokens of KV.

    Attributes:
        pool_tokens_per_replica: one replica's GPU KV pool (without the shared prompt).
        cpu_tokens_total: the CPU tier over all replicas, before any cap per node.
        cpu_tokens_max_per_replica: what one replica's share of a node's slots holds.
        nvme_tokens_per_replica: one replica's NVMe tier.
        shared_tokens: the shared tier over all replicas (0: none).
    """

    pool_tokens_per_replica: float
    cpu_tokens_total: float
    cpu_tokens_max_per_replica: float
    nvme_tokens_per_replica: float
    shared_tokens: float


@dataclass(frozen=True)
class Evaluation:
    """One replica count: where returns hit and how one replica copes."""

    replicas: int
    hits: TierHits
    load: ReplicaLoad

    def meets(self, ttft_p95_ms: float, tpot_ms: float) -> bool:
        """Both targets met (an overloaded replica meets neither)."""
        return self.load.ttft_p95_ms <= ttft_p95_ms and self.load.tpot_ms <= tpot_ms


@dataclass(frozen=True)
class Scale:
    """Replicas for the load, and what the plan needs without a tier.

    Attributes:
        replicas_for_memory: replicas the KV pools need.
        replicas_for_compute: replicas the targets need (``None``: not reachable).
        binding: ``memory``, ``ttft_p95`` or ``tpot``: what sets the replicas.
        final: the plan at its replicas on whole nodes.
        no_tier_same_gpus: the same replicas with only the GPU prefix cache.
        no_tier_replicas: replicas that reach ``final``'s TTFT p95 without a tier
            (``None``: not within :data:`~sizing.cluster.MAX_NODES` nodes).
    """

    replicas_for_memory: int
    replicas_for_compute: int | None
    binding: str
    final: Evaluation
    no_tier_same_gpus: Evaluation
    no_tier_replicas: int | None


class Evaluator:
    """Evaluates a replica count for one workload (the performance model's times are in
    the :class:`~sizing.load.ServiceTable`, evaluated once)."""

    def __init__(
        self,
        *,
        stream: ReferenceStream,
        table: ServiceTable,
        capacities: Capacities,
        tpot_ms: Callable[[float], float],
        mean_request_tokens: float,
        memo: dict[Any, Evaluation] | None = None,
        windows: dict[tuple[float, float], float] | None = None,
    ) -> None:
        self.stream = stream
        self.table = table
        self.cap = capacities
        self.tpot_ms = tpot_ms
        self.mean_request_tokens = mean_request_tokens
        self._memo: dict[Any, Evaluation] = {} if memo is None else memo
        self._windows: dict[tuple[float, float], float] = {} if windows is None else windows

    def __call__(self, replicas: int, *, tiers: bool = True, memory: bool = True) -> Evaluation:
        """Hit rates and load of one of ``replicas`` replicas; ``memory=False`` lets the
        decode batch exceed the pool (the compute need alone).

        Results are kept per count, switches and what one replica's tiers hold (the GPU
        pool, its share of the CPU tier, its NVMe tier, the shared tier): a search asks
        for the same count more than once, and evaluators given the same ``memo`` (same
        stream, service table, TPOT and request length) share them, since one replica's
        hit rates and load depend on nothing else."""
        cap = self.cap
        held = (
            (self._cpu_tokens(replicas), cap.nvme_tokens_per_replica, cap.shared_tokens)
            if tiers
            else None
        )
        key = (replicas, memory, cap.pool_tokens_per_replica, held)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._evaluate(replicas, tiers=tiers, memory=memory)
        return hit

    def _window(self, stream: ReferenceStream, capacity_tokens: float) -> float:
        """:func:`~sizing.hit_rate.window_s`, kept per rate of new conversations and
        capacity: the streams of one evaluator differ only in that rate (its
        conversations split over the replicas), and evaluators given the same
        ``windows`` share its stream's shape and gaps, as those given the same ``memo``."""
        key = (stream.conversations_per_s, capacity_tokens)
        hit = self._windows.get(key)
        if hit is None:
            hit = self._windows[key] = window_s(stream, capacity_tokens)
        return hit

    def _cpu_tokens(self, replicas: int) -> float:
        """One replica's share of the CPU tier, capped by its share of a node's slots."""
        cap = self.cap
        return min(cap.cpu_tokens_total / replicas, cap.cpu_tokens_max_per_replica)

    def _evaluate(self, replicas: int, *, tiers: bool, memory: bool) -> Evaluation:
        cap = self.cap
        per = ReferenceStream(
            self.stream.conversations_per_s / replicas, self.stream.shape, self.stream.gaps
        )
        rate = self.stream.turns_per_s / replicas
        max_batch = cap.pool_tokens_per_replica / self.mean_request_tokens
        cpu = self._cpu_tokens(replicas)
        free = cap.pool_tokens_per_replica
        load = None
        for _ in range(2):  # the GPU cache is what the decode batch leaves free
            hits = hit_rates(
                per,
                gpu_tokens=free,
                cpu_tokens=cpu if tiers else 0.0,
                nvme_tokens=cap.nvme_tokens_per_replica if tiers else 0.0,
                shared_tokens=cap.shared_tokens if tiers else 0.0,
                shared_instances=replicas,
                window=self._window,
            )
            load = replica_load(
                requests_per_s=rate,
                table=self.table,
                hits=hits,
                output_tokens=self.stream.shape.output_tokens,
                tpot_ms=self.tpot_ms,
                max_batch=max_batch if memory else math.inf,
            )
            if load.overloaded:
                break
            left = max(
                0.0, cap.pool_tokens_per_replica - load.decode_batch * self.mean_request_tokens
            )
            if free - left <= 0.01 * cap.pool_tokens_per_replica:
                break  # the batch takes under 1 % of the pool: the GPU cache is as assumed
            free = left
        assert load is not None
        return Evaluation(replicas, hits, load)

    def smallest(
        self,
        ok: Callable[[Evaluation], bool],
        *,
        low: int,
        high: int,
        start: int | None = None,
        multiple: int = 1,
        tiers: bool = True,
        memory: bool = True,
    ) -> int | None:
        """The smallest replica count in ``[low, high]`` whose evaluation is ``ok``
        (monotone in the count), or ``None``; ``start`` is a first guess, and only
        multiples of ``multiple`` past ``low`` are tried (``high − low`` is one)."""

        def check(step: int) -> bool:
            return ok(self(low + step * multiple, tiers=tiers, memory=memory))

        top = (high - low) // multiple
        probe = min(top, max(0, -(-((start or low) - low) // multiple)))
        bad = -1  # below the range: taken as not ok
        step = 1
        while not check(probe):
            if probe == top:
                return None
            bad, probe = probe, min(top, probe + step)
            step *= 2
        good = probe
        while good - bad > 1:
            mid = (good + bad) // 2
            if check(mid):
                good = mid
            else:
                bad = mid
        return low + good * multiple

    def no_tier_floor(self, ttft_p95_ms: float) -> int | None:
        """Fewest replicas that can reach ``ttft_p95_ms`` with only the GPU prefix cache,
        ``None`` when no count can.

        The TTFT p95 is at least the service time's 95th percentile plus one decode step
        (:mod:`sizing.load`), so the GPU cache must serve the share of returns
        :meth:`~sizing.load.ServiceTable.gpu_share_for_p95` names for that time less the
        step of one request; a replica's GPU cache is at most its whole pool, which keeps
        that share of its conversations' returns once ``R`` replicas split the stream so
        that the pool holds its window (:func:`~sizing.hit_rate.tier_tokens_for_hit_rate`
        of the whole stream, divided by ``R``). The search's first guess."""
        share = self.table.gpu_share_for_p95(ttft_p95_ms - self.tpot_ms(1.0))
        if share is None or share >= 1:
            return None
        if share <= 0:
            return 1
        tokens = tier_tokens_for_hit_rate(self.stream, share)
        return max(1, math.ceil(tokens / self.cap.pool_tokens_per_replica))


def replicas_for_memory(capacities: Capacities, total_batch: float, mean_tokens: float) -> int:
    """Replicas whose pools hold the decode batch of the whole plan."""
    need = total_batch * mean_tokens
    return max(1, math.ceil(need / capacities.pool_tokens_per_replica - 1e-9))


def scale(
    evaluate: Evaluator,
    *,
    ttft_p95_ms: float,
    tpot_ms: float,
    replicas_per_node: int,
    min_nodes: int = 1,
    tiers: bool = True,
    max_nodes: int = MAX_NODES,
) -> Scale:
    """Replicas, on whole nodes, for the targets; and the no-tier alternative.

    Args:
        evaluate: the workload's :class:`Evaluator`.
        ttft_p95_ms: TTFT p95 target, ms.
        tpot_ms: TPOT target, ms.
        replicas_per_node: replicas one node carries.
        min_nodes: nodes the plan has at least (1; more for pipeline-parallel replicas).
        tiers: False to size a plan that sells no offload tier (GPU prefix cache only).
        max_nodes: most nodes (node groups with pipeline parallel) to search.

    Source: module docstring.
    """
    high = max_nodes * replicas_per_node
    low = min_nodes * replicas_per_node
    one = evaluate(1, tiers=tiers, memory=False)
    guess = max(1, math.ceil(one.load.prefill_utilization / 0.6))  # about 60 % busy each

    def meets(e: Evaluation) -> bool:
        return e.meets(ttft_p95_ms, tpot_ms)

    compute = evaluate.smallest(meets, low=1, high=high, start=guess, tiers=tiers, memory=False)
    needed = None
    if compute is not None:
        needed = evaluate.smallest(meets, low=compute, high=high, tiers=tiers)
    nodes = max(min_nodes, math.ceil((needed or high) / replicas_per_node))
    final = evaluate(nodes * replicas_per_node, tiers=tiers)
    memory = replicas_for_memory(
        evaluate.cap, final.load.decode_batch * final.replicas, evaluate.mean_request_tokens
    )
    if compute is None or needed is None:
        at_most = evaluate(high, tiers=tiers, memory=False)
        binding = "ttft_p95" if at_most.load.ttft_p95_ms > ttft_p95_ms else "tpot"
        compute = None
    elif needed > compute:
        binding = "memory"
        memory = max(memory, needed)
    else:
        below = evaluate(compute - 1, tiers=tiers, memory=False) if compute > 1 else one
        binding = "tpot" if below.load.tpot_ms > tpot_ms else "ttft_p95"
    same = evaluate(final.replicas, tiers=False)
    target = max(final.load.ttft_p95_ms, 1.0) * (1 + 1e-9)
    floor = evaluate.no_tier_floor(target)
    no_tier = evaluate.smallest(
        lambda e: (
            e.load.ttft_p95_ms <= target and e.load.tpot_ms <= max(tpot_ms, final.load.tpot_ms)
        ),
        low=max(low, final.replicas),
        high=high,
        start=high if floor is None else floor,
        multiple=replicas_per_node,
        tiers=False,
    )
    return Scale(
        replicas_for_memory=memory,
        replicas_for_compute=compute,
        binding=binding,
        final=final,
        no_tier_same_gpus=same,
        no_tier_replicas=no_tier,
    )
