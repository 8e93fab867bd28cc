"""GPUs for the load: replicas = the larger of what memory needs and what compute needs,
with and without an offload tier, on whole nodes.

Procedure (sources of each rule in the modules it calls):

1. **Compute.** The smallest number of replicas ``R`` at which one replica, serving
   ``1/R`` of the busiest hour's requests (a KV-aware router spreads the users evenly and
   keeps each conversation on its replica), meets the TTFT p95 and TPOT targets
   (:mod:`sizing.serving.load`). More replicas lower each one's load and give each the same
   GPU cache for fewer conversations, so the check is monotone in ``R`` and a search
   finds it (:meth:`Evaluator.smallest`: from a first guess, steps of 1, 2, 4, … up or
   down until the answer is bracketed, then halving). The guess solves the load model
   for ``R`` with the hit rates of the most replicas, and again (at most
   :data:`GUESS_STEPS` times) with those at the guess (:mod:`sizing.serving.first_guess`).
2. **Memory.** Each replica's KV pool must hold its decode batch (requests generating
   at once, at their mean length); the weights and one max-length request fix the
   replica's GPUs (:mod:`sizing.plan.layout_choice`). The same search, from the compute count up,
   finds the replicas that meet the targets with it, starting from the count at which
   Little's law puts a pool's worth of requests in the batch. The users a customer says
   are active at the same moment stay a check of the memory plan (:mod:`sizing.verdict`).
3. **Nodes.** ``max(memory, compute)`` replicas on whole nodes (:mod:`sizing.layout.cluster`);
   the plan is evaluated again at that count for its TTFT p95 and TPOT.
4. **Without a tier.** The same search with only the GPU prefix cache, for the
   replicas that reach the tiered plan's TTFT p95: the GPUs the tier saves. It tries
   whole nodes only (the answer is rounded up to them) and starts from a floor: the
   fewest replicas whose whole pools keep the share of returns on the GPU without
   which the service time's 95th percentile alone exceeds that TTFT.

A guess changes only how many counts are evaluated: every answer is a count whose
evaluation meets the check next to one that does not (or the end of the range).

Each count is evaluated by :class:`sizing.serving.evaluation.Evaluator` (hit rates per replica and
one replica's load).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.layout.cluster import MAX_NODES
from sizing.serving.evaluation import Capacities, Evaluation, Evaluator
from sizing.serving.load import ReplicaLoad


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
            (``None``: not within :data:`~sizing.layout.cluster.MAX_NODES` nodes).
    """

    replicas_for_memory: int
    replicas_for_compute: int | None
    binding: str
    final: Evaluation
    no_tier_same_gpus: Evaluation
    no_tier_replicas: int | None


GUESS_STEPS = 2
"""Times the compute search's first guess is made again from the hit rates at the guess."""


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
    targets = (ttft_p95_ms, tpot_ms)

    # From the most replicas (the best hit rates): None means no load meets the targets.
    guess = evaluate.guess("compute", evaluate(high, tiers=tiers), targets_ms=targets)
    steps = 0
    while guess is not None and steps < GUESS_STEPS:  # again from the guess's hit rates
        steps += 1
        again = evaluate(guess, tiers=tiers, memory=False)
        better = evaluate.guess("compute", again, targets_ms=targets)
        if better is None or better == guess:
            break
        guess = better
    compute = evaluate.smallest(
        low=1,
        high=high,
        start=high if guess is None else guess,
        tiers=tiers,
        memory=False,
        targets_ms=targets,
    )
    needed = None
    if compute is not None:
        near = evaluate(compute, tiers=tiers, memory=False)
        start = evaluate.guess("pools", near, targets_ms=targets)
        needed = evaluate.smallest(
            low=compute, high=high, start=start, tiers=tiers, targets_ms=targets
        )
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
        binding = _compute_binding(
            evaluate(max(1, compute - 1), tiers=tiers, memory=False).load, tpot_ms
        )
    same = evaluate(final.replicas, tiers=False)
    target = max(final.load.ttft_p95_ms, 1.0) * (1 + 1e-9)
    floor = evaluate.guess("no_tier", same, targets_ms=(target, tpot_ms))
    no_tier = evaluate.smallest(
        low=max(low, final.replicas),
        high=high,
        start=high if floor is None else floor,
        multiple=replicas_per_node,
        tiers=False,
        targets_ms=(target, max(tpot_ms, final.load.tpot_ms)),
    )
    return Scale(
        replicas_for_memory=memory,
        replicas_for_compute=compute,
        binding=binding,
        final=final,
        no_tier_same_gpus=same,
        no_tier_replicas=no_tier,
    )


def _compute_binding(below: ReplicaLoad, tpot_ms: float) -> str:
    """Which target one replica fewer than the load needs would miss: ``ttft_p95`` when
    its prefills cannot keep up (utilisation ρ ≥ 1: the queue, and with it the TTFT, grows
    without bound; the decode batch's TPOT is then no measure of it), else ``tpot`` when
    its decode steps are slower than the target, else ``ttft_p95``."""
    if below.prefill_utilization >= 1:
        return "ttft_p95"
    return "tpot" if below.tpot_ms > tpot_ms else "ttft_p95"
