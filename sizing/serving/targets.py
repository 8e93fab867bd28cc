"""The targets a plan under traffic is sized for, and the errors when no plan within the
node limit can meet them (:func:`sizing.serving.serve.serve`).

- A target the customer set that one request cannot meet even without any load is
  refused, naming the target and that time.
- A default target that a request on one node cannot meet without queueing (the plan's
  hit rates, no wait) is replaced by :data:`RELAXED_TARGET_FACTOR` × that time, and the
  plan says so (a planning choice).
"""

from __future__ import annotations

from sizing.errors import Fix, InfeasibleError, gettext_noop
from sizing.layout.cluster import MAX_NODES
from sizing.serving.evaluation import Evaluation
from sizing.traffic.profile import DEFAULT_TPOT_MS, DEFAULT_TTFT_P95_MS, Traffic
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
"""A default target below what one request takes without load is replaced by this
multiple of that time (a planning choice, stated in the plan's warnings)."""


def targets(
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
