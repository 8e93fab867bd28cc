"""The TTFT-against-context chart of the page and the PDF.

Restates the plan's ``ttft_curve`` (:meth:`sizing.performance.hit_value.TransferEstimate.curve`):
a returning user's time to first token for a miss and a hit from each tier with a
measured path, at contexts from 1,024 tokens to twice the plan's. Both axes are
logarithmic (contexts double, times span decades). Coordinates are plain SVG numbers,
never localized; tick labels are numbers in the active language, the x-axis ones
thinned so they do not overlap (:mod:`configurator.inquiries.chart_ticks`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from configurator.inquiries import chart_ticks

WIDTH, HEIGHT = 540, 244
LEFT, RIGHT, TOP, BOTTOM = 56, 520, 14, 186
SERIES = ("miss", "gpu", "cpu", "nvme", "shared")
COLOURS = {
    "miss": "#a8412f",
    "gpu": "#2f6f4f",
    "cpu": "#3b6ea8",
    "nvme": "#9a6b2f",
    "shared": "#6b4f8a",
}
"""One colour per line; each tier as in the memory-tier charts of the page and the PDF
(``--gpu``, ``--cpu``, ``--nvme``, ``--shared`` in ``static/css/site.css``, ``pdf/_tiers.svg``)."""


def _ms_label(ms: float) -> str:
    return f"{chart_ticks.label(ms / 1000)} s" if ms >= 1000 else f"{chart_ticks.label(ms)} ms"


def points_key(curve: Sequence[Mapping[str, Any]], plan_context_tokens: int = 0) -> str:
    """What :func:`chart` draws from, as text: equal for two calls that draw the same
    chart (in one language), so a page can cache the drawing by it."""
    return repr((plan_context_tokens, curve))


def chart(curve: Sequence[Mapping[str, Any]], plan_context_tokens: int = 0) -> dict[str, Any]:
    """Lines, ticks and the marker of the plan's context for ``curve``.

    Returns ``{}`` for fewer than two points (no chart). Otherwise ``width``,
    ``height``, ``lines`` (``kind``, ``colour``, ``points`` as ``"x,y x,y …"``),
    ``x_ticks`` and ``y_ticks`` (``pos``, ``label``), ``plot`` (the plot area's
    ``left``, ``right``, ``top``, ``bottom``) and ``marker`` (x of the plan's context or
    ``None``).
    """
    if len(curve) < 2:
        return {}
    tokens = [int(p["context_tokens"]) for p in curve]
    series: dict[str, list[tuple[int, float]]] = {k: [] for k in SERIES}
    for point, n in zip(curve, tokens, strict=True):
        series["miss"].append((n, float(point["miss_ms"])))
        for tier, ms in (point.get("hit_ms") or {}).items():
            if ms is not None and tier in series:
                series[tier].append((n, float(ms)))
    values = [ms for pts in series.values() for _n, ms in pts if ms > 0]
    lo_exp = math.floor(math.log10(min(values)))
    hi_exp = math.ceil(math.log10(max(values)))
    if hi_exp == lo_exp:
        hi_exp += 1
    x_lo, x_hi = math.log2(tokens[0]), math.log2(tokens[-1])

    def x(n: float) -> float:
        return LEFT + (math.log2(n) - x_lo) / (x_hi - x_lo) * (RIGHT - LEFT)

    def y(ms: float) -> float:
        share = (math.log10(max(ms, 10.0**lo_exp)) - lo_exp) / (hi_exp - lo_exp)
        return BOTTOM - share * (BOTTOM - TOP)

    lines = [
        {
            "kind": kind,
            "colour": COLOURS[kind],
            "points": " ".join(f"{x(n):.1f},{y(ms):.1f}" for n, ms in pts),
        }
        for kind, pts in series.items()
        if len(pts) >= 2
    ]
    marker = None
    if plan_context_tokens and tokens[0] <= plan_context_tokens <= tokens[-1]:
        marker = f"{x(plan_context_tokens):.1f}"
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "plot": {"left": LEFT, "right": RIGHT, "top": TOP, "bottom": BOTTOM},
        "lines": lines,
        "x_ticks": chart_ticks.thinned(
            [{"pos": f"{x(n):.1f}", "label": chart_ticks.label(n)} for n in tokens]
        ),
        "y_ticks": [
            {"pos": f"{y(10.0**e):.1f}", "label": _ms_label(10.0**e)}
            for e in range(lo_exp, hi_exp + 1)
        ],
        "marker": marker,
    }
