"""One replica count of a workload evaluated: where returns hit and how one replica
copes, for the searches of :mod:`sizing.serving.replicas`.

Hit rates per replica come from :mod:`sizing.traffic.hit_rate`: the GPU cache is the pool less
the decode batch, the CPU tier is the plan's tier split over the replicas (capped by
each node's slots), NVMe per replica, and the shared tier is pooled over all replicas.
One replica's load at those hits is :mod:`sizing.serving.load`'s (M/G/1 prefill queue, Little's
law for the decode batch), its times from the workload's
:class:`~sizing.serving.service_times.ServiceTable`; the first guesses of the searches are
:mod:`sizing.serving.first_guess`'s and the search over counts :mod:`sizing.serving.count_search`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sizing.serving import first_guess as scale_guess
from sizing.serving.count_search import first_passing
from sizing.serving.load import MAX_DECODE_BATCH, ReplicaLoad, Settled, settle
from sizing.serving.service_times import ServiceTable
from sizing.traffic.hit_rate import ReferenceStream, TierHits, Window, tier_hits, window_and_share


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
    peak_batch: float = field(default=math.inf, compare=False, repr=False)
    """The largest decode batch any pass of the evaluation tried against its limit
    (:attr:`~sizing.serving.load.ReplicaLoad.peak_batch`; ``inf``: not known)."""

    def meets(self, ttft_p95_ms: float, tpot_ms: float) -> bool:
        """Both targets met (an overloaded replica meets neither)."""
        return self.load.ttft_p95_ms <= ttft_p95_ms and self.load.tpot_ms <= tpot_ms


class _Passes(NamedTuple):
    """An evaluation's passes settled (:meth:`Evaluator._passes`): the last pass's hits,
    its key among the settled loads, its batch, and the largest batch any pass tried."""

    hits: TierHits
    key: tuple[float, ...]
    settled: Settled
    peak_batch: float


class Evaluator:
    """Evaluates a replica count for one workload (the performance model's times are in
    the :class:`~sizing.serving.service_times.ServiceTable`, evaluated once)."""

    def __init__(
        self,
        *,
        stream: ReferenceStream,
        table: ServiceTable,
        capacities: Capacities,
        tpot_ms: Callable[[float], float],
        mean_request_tokens: float,
        memo: dict[Any, Any] | None = None,
        windows: dict[tuple[float, float], tuple[float, float]] | None = None,
    ) -> None:
        self.stream = stream
        self.table = table
        self.cap = capacities
        self.tpot_ms = tpot_ms
        self.mean_request_tokens = mean_request_tokens
        self._memo: dict[Any, Any] = {} if memo is None else memo
        self._windows: dict[tuple[float, float], tuple[float, float]] = (
            {} if windows is None else windows
        )
        self._loads: dict[tuple[float, ...], Settled] = {}
        self._finished: dict[tuple[float, ...], ReplicaLoad] = {}

    def __getstate__(self) -> dict[str, Any]:
        """What defines the evaluator, without the results it keeps (a plan pickled into
        a cache carries its inputs; the results are evaluated again when asked for)."""
        return {**self.__dict__, "_memo": {}, "_windows": {}, "_loads": {}, "_finished": {}}

    def __call__(self, replicas: int, *, tiers: bool = True, memory: bool = True) -> Evaluation:
        """Hit rates and load of one of ``replicas`` replicas; ``memory=False`` lets the
        decode batch exceed the pool (the compute need alone).

        Results are kept per count, switches and what one replica's tiers hold (the GPU
        pool, its share of the CPU tier, its NVMe tier, the shared tier): a search asks
        for the same count more than once, and evaluators given the same ``memo`` (same
        stream, service table, TPOT and request length) share them, since one replica's
        hit rates and load depend on nothing else. The two ``memory`` switches differ only
        in the pool's limit on the decode batch, so an evaluation whose batch never passed
        that limit (:attr:`Evaluation.peak_batch`) is kept for both."""
        held = self._held(replicas, tiers)
        key, hit = self._kept("evaluation", replicas, held, memory)
        if hit is None:
            passes = self._kept("passes", replicas, held, memory)[1]
            if passes is None:
                passes = self._passes(replicas, held, memory=memory)
            load = self._finished.get(passes.key)
            if load is None:  # the last pass only
                load = self._finished[passes.key] = passes.settled.load(self.table, passes.hits)
            hit = self._memo[key] = Evaluation(replicas, passes.hits, load, passes.peak_batch)
        assert isinstance(hit, Evaluation)
        return hit

    def _held(self, replicas: int, tiers: bool) -> tuple[float, float, float] | None:
        """What one of ``replicas`` replicas' tiers beyond the GPU hold, as the memo's keys
        name it (:meth:`__call__`): its share of the CPU tier, its NVMe tier and the
        shared tier (``None`` without tiers)."""
        if not tiers:
            return None
        cap = self.cap
        return (self._cpu_tokens(replicas), cap.nvme_tokens_per_replica, cap.shared_tokens)

    def _kept(
        self, kind: str, replicas: int, held: tuple[float, float, float] | None, memory: bool
    ) -> tuple[Any, Any]:
        """The key of an evaluation's ``kind`` (``evaluation`` or its settled ``passes``)
        in the memo (:meth:`__call__`), for what its tiers hold (:meth:`_held`), and what
        is kept under it, or under the other ``memory`` switch when its batch never passed
        this one's limit (``None``: nothing)."""
        cap = self.cap
        store = self._memo
        key = (kind, replicas, memory, cap.pool_tokens_per_replica, held)
        hit = store.get(key)
        if hit is None:
            hit = store.get((kind, replicas, not memory, cap.pool_tokens_per_replica, held))
            limit = min(cap.pool_tokens_per_replica / self.mean_request_tokens, MAX_DECODE_BATCH)
            if hit is not None and hit.peak_batch > limit:
                hit = None
            elif hit is not None:
                store[key] = hit
        return key, hit

    def meets(
        self,
        replicas: int,
        ttft_p95_ms: float,
        tpot_ms: float,
        *,
        tiers: bool = True,
        memory: bool = True,
    ) -> bool:
        """``self(replicas, tiers=tiers, memory=memory).meets(ttft_p95_ms, tpot_ms)``,
        without the whole TTFT p95 bisection where its bounds decide the comparison
        (:meth:`~sizing.serving.service_times.ServiceTable.p95_with_wait`): a search needs only
        the answer. The settled passes and the answer are kept in the memo, as
        :meth:`__call__` keeps evaluations."""
        held = self._held(replicas, tiers)
        hit = self._kept("evaluation", replicas, held, memory)[1]
        if hit is not None:
            return bool(hit.meets(ttft_p95_ms, tpot_ms))
        key, passes = self._kept("passes", replicas, held, memory)
        asked = ("meets", key, ttft_p95_ms, tpot_ms)
        answer = self._memo.get(asked)
        if answer is None:
            if passes is None:
                passes = self._memo[key] = self._passes(replicas, held, memory=memory)
            load = self._finished.get(passes.key)
            if load is not None:
                answer = load.ttft_p95_ms <= ttft_p95_ms and load.tpot_ms <= tpot_ms
            else:
                answer = passes.settled.meets(self.table, passes.hits, ttft_p95_ms, tpot_ms)
            self._memo[asked] = answer
        return bool(answer)

    def _window(self, stream: ReferenceStream, capacity_tokens: float) -> tuple[float, float]:
        """:func:`~sizing.traffic.hit_rate.window_and_share`, kept per rate of new conversations
        and capacity: the streams of one evaluator differ only in that rate (its
        conversations split over the replicas), and evaluators given the same
        ``windows`` share its stream's shape and gaps, as those given the same ``memo``."""
        key = (stream.conversations_per_s, capacity_tokens)
        hit = self._windows.get(key)
        if hit is None:
            hit = self._windows[key] = window_and_share(stream, capacity_tokens)
        return hit

    def _cpu_tokens(self, replicas: int) -> float:
        """One replica's share of the CPU tier, capped by its share of a node's slots."""
        cap = self.cap
        return min(cap.cpu_tokens_total / replicas, cap.cpu_tokens_max_per_replica)

    def _passes(
        self, replicas: int, held: tuple[float, float, float] | None, *, memory: bool
    ) -> _Passes:
        """The passes of :meth:`__call__`'s evaluation of ``replicas`` replicas whose tiers
        hold ``held`` (:meth:`_held`), settled to the decode batch (the TTFT p95 is taken
        from the last one).

        A pass whose hit shares, rate and batch limit were settled before (the shared
        tier often adds no hit to the tiers before it: the plan's final evaluation with
        it then settles as the one without) takes that batch and load again: they
        depend on nothing else of the evaluator's."""
        cap = self.cap
        stream = self.stream
        per = ReferenceStream(stream.conversations_per_s / replicas, stream.shape, stream.gaps)
        rate = stream.turns_per_s / replicas
        pool = cap.pool_tokens_per_replica
        limit = pool / self.mean_request_tokens if memory else math.inf
        window = self._window
        # The tiers beyond the GPU do not change between the passes (hit_rates' windows).
        beyond: tuple[Window | None, Window | None, Window | None] = (None, None, None)
        if held is not None:
            cpu, nvme, shared = held
            beyond = (
                window(per, cpu) if cpu else None,
                window(per, nvme) if nvme else None,
                window(per.scaled(replicas), shared) if shared else None,
            )
        h_max = stream.shape.max_token_hit_rate
        loads = self._loads
        free = pool
        peak = 0.0
        for _ in range(2):  # the GPU cache is what the decode batch leaves free
            hits = tier_hits(window(per, free), beyond, h_max)
            key = (rate, limit, hits.gpu, hits.cpu, hits.nvme, hits.shared)
            settled = loads.get(key)
            if settled is None:
                settled = loads[key] = settle(
                    requests_per_s=rate,
                    table=self.table,
                    hits=hits,
                    output_tokens=stream.shape.output_tokens,
                    tpot_ms=self.tpot_ms,
                    max_batch=limit,
                )
            if settled.peak_batch > peak:
                peak = settled.peak_batch
            if settled.overloaded:
                break
            left = max(0.0, pool - settled.decode_batch * self.mean_request_tokens)
            if free - left <= 0.01 * pool:
                break  # the batch takes under 1 % of the pool: the GPU cache is as assumed
            free = left
        assert settled is not None  # two passes at most, at least one
        return _Passes(hits, key, settled, peak)

    def smallest(
        self,
        ok: Callable[[Evaluation], bool] | None = None,
        *,
        low: int,
        high: int,
        start: int | None = None,
        multiple: int = 1,
        tiers: bool = True,
        memory: bool = True,
        targets_ms: tuple[float, float] | None = None,
    ) -> int | None:
        """The smallest replica count in ``[low, high]`` whose evaluation is ``ok``
        (monotone in the count), or ``None``; only multiples of ``multiple`` past ``low``
        are tried (``high − low`` is one).

        The search (:func:`sizing.serving.count_search.first_passing`) starts at ``start`` (a
        first guess; ``low`` without one) and steps in multiples.
        ``targets_ms`` (TTFT p95, TPOT) instead of ``ok``: the evaluation meets both
        (:meth:`meets`)."""

        def check(step: int) -> bool:
            count = low + step * multiple
            if targets_ms is not None:
                return self.meets(count, *targets_ms, tiers=tiers, memory=memory)
            assert ok is not None
            return ok(self(count, tiers=tiers, memory=memory))

        top = (high - low) // multiple
        probe = min(top, max(0, -(-((start or low) - low) // multiple)))
        good = first_passing(check, top=top, start=probe)
        return None if good is None else low + good * multiple

    def guess(self, kind: str, near: Evaluation, *, targets_ms: tuple[float, float]) -> int | None:
        """A search's first guess from the evaluation ``near``, one of
        :mod:`sizing.serving.first_guess`'s: ``compute`` (the replicas that meet ``targets_ms``,
        TTFT p95 and TPOT), ``pools`` (the pools that hold their decode batch) or
        ``no_tier`` (the floor for the TTFT p95 ``targets_ms[0]`` without a tier)."""
        cap = self.cap
        if kind == "compute":
            return scale_guess.compute_guess(
                stream=self.stream,
                table=self.table,
                tpot_ms=self.tpot_ms,
                replicas=near.replicas,
                hits=near.hits,
                load=near.load,
                targets_ms=targets_ms,
            )
        if kind == "pools":
            return scale_guess.pools_guess(
                stream=self.stream,
                tpot_ms=self.tpot_ms,
                pool_batch=cap.pool_tokens_per_replica / self.mean_request_tokens,
                replicas=near.replicas,
                load=near.load,
            )
        return scale_guess.no_tier_floor(
            stream=self.stream,
            table=self.table,
            tpot_ms=self.tpot_ms,
            pool_tokens=cap.pool_tokens_per_replica,
            ttft_p95_ms=targets_ms[0],
        )
