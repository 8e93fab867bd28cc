"""The two traffic charts' data: hit rate against the CPU tier's size, and TTFT p95
against the number of users, for a plan under traffic.

Both re-evaluate the plan's own workload (:class:`sizing.serving.evaluation.Evaluator`, the rules of
:mod:`sizing.traffic.hit_rate` and :mod:`sizing.serving.load`) at the plan's replica count,
changing one
input: the CPU tier per replica, or the users (their busy-hour stream and their share of
the CPU tier scale together, as the plan's tier is every user's conversation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sizing.serving.evaluation import Capacities, Evaluator
from sizing.serving.serve import Serving
from sizing.traffic.hit_rate import ReferenceStream
from sizing.units import GIB


@dataclass(frozen=True)
class HitPoint:
    """One point of the hit-rate curve.

    Attributes:
        cpu_tier_gib_per_replica: the CPU tier of one replica, GiB.
        gpu: share of returns that hit the GPU prefix cache.
        cpu: share that hit the CPU tier (the knee shows where more DRAM stops paying).
    """

    cpu_tier_gib_per_replica: float
    gpu: float
    cpu: float


@dataclass(frozen=True)
class TtftPoint:
    """One point of the TTFT curve: ``users`` at the plan's GPUs, with and without a
    tier (``inf`` where the GPUs cannot keep up)."""

    users: int
    ttft_p95_ms: float
    ttft_p95_without_tier_ms: float


def _evaluator(serving: Serving) -> Evaluator:
    if serving.evaluator is None:
        raise ValueError("the plan under traffic carries no evaluator")
    return serving.evaluator


def _probe(ev: Evaluator, stream: ReferenceStream, capacities: Capacities) -> Evaluator:
    """The plan's evaluator with another stream or other capacities."""
    return Evaluator(
        stream=stream,
        table=ev.table,
        capacities=capacities,
        tpot_ms=ev.tpot_ms,
        mean_request_tokens=ev.mean_request_tokens,
    )


def hit_rate_curve(
    serving: Serving, sizes_gib: Sequence[float], *, kv_bytes_per_token: int
) -> list[HitPoint]:
    """Hit rates at the plan's replicas for each CPU tier of ``sizes_gib`` GiB per replica.

    Raises:
        ValueError: for a negative size or a plan without an evaluator.
    """
    ev = _evaluator(serving)
    replicas = serving.final.replicas
    out = []
    for gib in sizes_gib:
        if gib < 0:
            raise ValueError(f"tier sizes must be >= 0 GiB, got {gib}")
        tokens = gib * GIB / kv_bytes_per_token
        probe = _probe(
            ev,
            ev.stream,
            replace(ev.cap, cpu_tokens_total=tokens * replicas, cpu_tokens_max_per_replica=tokens),
        )
        hits = probe(replicas).hits
        out.append(HitPoint(gib, hits.gpu, hits.cpu))
    return out


def ttft_curve(serving: Serving, users: Sequence[int], *, plan_users: int) -> list[TtftPoint]:
    """TTFT p95 at the plan's replicas for each number of ``users``.

    Raises:
        ValueError: for a count below 1 or a plan without an evaluator.
    """
    ev = _evaluator(serving)
    replicas = serving.final.replicas
    out = []
    for count in users:
        if count < 1:
            raise ValueError(f"users must be >= 1, got {count}")
        scale = count / plan_users
        stream = ReferenceStream(
            ev.stream.conversations_per_s * scale, ev.stream.shape, ev.stream.gaps
        )
        probe = _probe(
            ev, stream, replace(ev.cap, cpu_tokens_total=ev.cap.cpu_tokens_total * scale)
        )
        with_tier = probe(replicas).load.ttft_p95_ms
        without = probe(replicas, tiers=False).load.ttft_p95_ms
        out.append(TtftPoint(count, with_tier, without))
    return out
