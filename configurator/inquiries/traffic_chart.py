"""The two traffic charts of the page and the PDF: the CPU tier's hit rate against its
size per replica (the knee shows where more DRAM stops paying), and TTFT p95 against
the number of users, with and without a tier.

The points come from :mod:`sizing.serving.curves` (the plan's own evaluator at its
replica count); :func:`curves` computes them once per plan with few points, so the live
estimate stays cheap, and the quote stores them with its plan summary. :func:`charts`
turns them into the geometry both surfaces draw. Coordinates are plain SVG numbers,
never localized; tick labels are numbers in the active language, the x-axis ones
thinned so they do not overlap (:mod:`configurator.inquiries.chart_ticks`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from configurator.inquiries import chart_ticks
from sizing.plan.orchestrator import Plan
from sizing.serving.curves import hit_rate_curve, ttft_curve

WIDTH, HEIGHT = 540, 244
LEFT, RIGHT, TOP, BOTTOM = 56, 520, 14, 186
POINTS = 9
"""Points per curve: enough for the knee, few enough for the live estimate."""
TIER_SPAN = 2.0
"""Sizes run from 0 to twice the plan's CPU tier per replica."""
USER_SHARES = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0)
"""Users as shares of the plan's users."""
COLOURS = {"cpu": "#3b6ea8", "gpu": "#2f6f4f", "with": "#3b6ea8", "without": "#a8412f"}
"""GPU and CPU tier as in the memory-tier chart; without a tier as a full prefill."""


def available(plan: Plan) -> bool:
    """Whether :func:`curves` has points for ``plan`` (a plan under traffic with a
    measured basis), without computing them."""
    return plan.serving is not None and plan.serving.evaluator is not None


def curves(plan: Plan) -> dict[str, Any] | None:
    """The plan's two curves as JSON-ready lists, or ``None`` without traffic figures.

    Returns ``{"plan_cpu_tier_gib": float, "plan_users": int, "hit_rate": [{"gib",
    "gpu", "cpu"}], "ttft": [{"users", "with_ms", "without_ms"}]}``: sizes in GiB per
    replica, hit rates as shares (0 to 1), times in ms (``None`` where the GPUs cannot
    keep up).
    """
    serving = plan.serving
    if serving is None or serving.evaluator is None:
        return None
    plan_gib = float(plan.cpu_tier.per_instance_gib)
    top_gib = TIER_SPAN * (plan_gib if plan_gib > 0 else max(plan.conversation_gib, 1.0) * 8)
    sizes = [round(top_gib * i / (POINTS - 1), 2) for i in range(POINTS)]
    users = plan.request.workload.users
    counts = sorted({max(1, round(users * share)) for share in USER_SHARES})

    def ms(value: float) -> float | None:
        return round(value, 1) if math.isfinite(value) else None

    return {
        "plan_cpu_tier_gib": round(plan_gib, 2),
        "plan_users": users,
        "hit_rate": [
            {"gib": p.cpu_tier_gib_per_replica, "gpu": round(p.gpu, 4), "cpu": round(p.cpu, 4)}
            for p in hit_rate_curve(serving, sizes, kv_bytes_per_token=plan.kv_bytes_per_token)
        ],
        "ttft": [
            {
                "users": p.users,
                "with_ms": ms(p.ttft_p95_ms),
                "without_ms": ms(p.ttft_p95_without_tier_ms),
            }
            for p in ttft_curve(serving, counts, plan_users=users)
        ],
    }


def _frame() -> dict[str, Any]:
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "plot": {"left": LEFT, "right": RIGHT, "top": TOP, "bottom": BOTTOM},
    }


def _x(value: float, lo: float, hi: float) -> float:
    return LEFT + (value - lo) / (hi - lo) * (RIGHT - LEFT)


def hit_chart(points: Sequence[Mapping[str, Any]], plan_gib: float = 0.0) -> dict[str, Any]:
    """Lines of the CPU tier's hit rate (and the GPU's, for reference) against the tier's
    size, ticks, and the marker of the plan's tier; ``{}`` for fewer than two points."""
    if len(points) < 2:
        return {}
    sizes = [float(p["gib"]) for p in points]
    lo, hi = sizes[0], sizes[-1]
    if hi <= lo:
        return {}

    def y(share: float) -> float:
        return BOTTOM - max(0.0, min(1.0, share)) * (BOTTOM - TOP)

    lines = [
        {
            "kind": kind,
            "colour": COLOURS[kind],
            "points": " ".join(
                f"{_x(s, lo, hi):.1f},{y(float(p[kind])):.1f}"
                for s, p in zip(sizes, points, strict=True)
            ),
        }
        for kind in ("cpu", "gpu")
    ]
    marker = f"{_x(plan_gib, lo, hi):.1f}" if plan_gib and lo <= plan_gib <= hi else None
    return {
        **_frame(),
        "lines": lines,
        "x_ticks": chart_ticks.thinned(
            [{"pos": f"{_x(s, lo, hi):.1f}", "label": chart_ticks.label(round(s))} for s in sizes]
        ),
        "y_ticks": [{"pos": f"{y(q / 4):.1f}", "label": f"{q * 25} %"} for q in range(5)],
        "marker": marker,
    }


def users_chart(points: Sequence[Mapping[str, Any]], plan_users: int = 0) -> dict[str, Any]:
    """Lines of TTFT p95 with and without a tier against users (TTFT on a logarithmic
    scale; a line stops where the GPUs cannot keep up), ticks, and the marker of the
    plan's users; ``{}`` for fewer than two points."""
    if len(points) < 2:
        return {}
    counts = [int(p["users"]) for p in points]
    lo, hi = counts[0], counts[-1]
    values = [float(p[k]) for p in points for k in ("with_ms", "without_ms") if p.get(k)]
    if hi <= lo or not values:
        return {}
    lo_exp = math.floor(math.log10(min(values)))
    hi_exp = math.ceil(math.log10(max(values)))
    if hi_exp == lo_exp:
        hi_exp += 1

    def y(ms: float) -> float:
        share = (math.log10(max(ms, 10.0**lo_exp)) - lo_exp) / (hi_exp - lo_exp)
        return BOTTOM - share * (BOTTOM - TOP)

    lines = []
    for kind in ("with", "without"):
        pts = [
            (n, float(p[f"{kind}_ms"]))
            for n, p in zip(counts, points, strict=True)
            if p.get(f"{kind}_ms")
        ]
        if len(pts) >= 2:
            lines.append(
                {
                    "kind": kind,
                    "colour": COLOURS[kind],
                    "points": " ".join(f"{_x(n, lo, hi):.1f},{y(ms):.1f}" for n, ms in pts),
                }
            )
    marker = f"{_x(plan_users, lo, hi):.1f}" if plan_users and lo <= plan_users <= hi else None
    return {
        **_frame(),
        "lines": lines,
        "x_ticks": chart_ticks.thinned(
            [{"pos": f"{_x(n, lo, hi):.1f}", "label": chart_ticks.label(n)} for n in counts]
        ),
        "y_ticks": [
            {
                "pos": f"{y(10.0**e):.1f}",
                "label": f"{chart_ticks.label(10.0**e / 1000)} s"
                if e >= 3
                else f"{chart_ticks.label(10.0**e)} ms",
            }
            for e in range(lo_exp, hi_exp + 1)
        ],
        "marker": marker,
    }


def charts(data: Mapping[str, Any] | None) -> dict[str, Any]:
    """Both charts' geometry from :func:`curves`' output (``{}`` when there is none):
    ``{"hit": hit_chart(...), "users": users_chart(...)}``."""
    if not data:
        return {}
    return {
        "hit": hit_chart(data.get("hit_rate") or [], float(data.get("plan_cpu_tier_gib") or 0)),
        "users": users_chart(data.get("ttft") or [], int(data.get("plan_users") or 0)),
    }
