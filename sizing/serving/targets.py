"""The targets a plan under traffic is sized for, and the errors when no plan within the
node limit can meet them (:func:`sizing.serving.serve.serve`).

- A target closer to what one request takes without any load than
  :data:`RELAXED_TARGET_FACTOR` × that time, typed or the default, is sized for that
  multiple, and the plan says it misses the target (a planning choice).
"""

from __future__ import annotations

from sizing.errors import Fix, InfeasibleError, gettext_noop
from sizing.layout.cluster import MAX_NODES
from sizing.serving.evaluation import Evaluation
from sizing.traffic.profile import Traffic
from sizing.verdict import Note


def too_many_nodes(users: int) -> InfeasibleError:
    """The error when even :data:`~sizing.layout.cluster.MAX_NODES` nodes cannot carry the load."""
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
"""No plan is sized for a latency target closer to what one request takes without any
load than this multiple of that time: a TTFT p95 near the bare service time needs the
replicas nearly idle, so the GPU count grows without bound as the target nears it
(M/G/1 waiting time, Kleinrock, "Queueing Systems" vol. 1, 1975, ch. 5). A planning
choice, stated in the plan's warnings; a target below it is marked as missed."""


def targets(traffic: Traffic, unloaded: Evaluation) -> tuple[float, float, tuple[Note, ...]]:
    """The TTFT p95 and TPOT the plan is sized for, ms, and a note per target it cannot
    meet.

    One floor for both targets, whether the customer typed them or took the defaults:
    what a request takes without any load (``unloaded``: the plan's hit rates at the
    largest replica count the node limit allows, no queueing to speak of). A target at
    least :data:`RELAXED_TARGET_FACTOR` × that floor is sized for as it is; a tighter one
    is sized for that multiple instead, and the note says so (the plan then misses the
    customer's target, :attr:`sizing.serving.serve.Serving.meets_targets`). The sized
    target never falls as the customer's target rises, so a looser target never takes
    more GPUs.

    Args:
        traffic: the customer's traffic and targets.
        unloaded: the workload evaluated at the largest replica count.

    Returns:
        ``(ttft_p95_ms, tpot_ms, notes)``: the targets to size for and the
        ``target_relaxed`` notes of those relaxed.
    """
    sized = []
    notes = []
    for name, target, floor in (
        ("TTFT p95", traffic.ttft_p95_ms, unloaded.load.ttft_p95_ms),
        ("TPOT", traffic.tpot_ms, unloaded.load.tpot_ms),
    ):
        relaxed = RELAXED_TARGET_FACTOR * floor
        if target >= relaxed:
            sized.append(target)
            continue
        sized.append(relaxed)
        notes.append(
            Note(
                "target_relaxed",
                (
                    ("target", name),
                    ("target_ms", _ms(target)),
                    ("floor_ms", round(floor)),
                    ("used_ms", round(relaxed)),
                ),
            )
        )
    return sized[0], sized[1], tuple(notes)


def _ms(value: float) -> float:
    """A target in whole ms, a target under 10 ms with two significant digits."""
    return round(value) if value >= 10 else float(f"{value:.2g}")
