"""The customer page's "Recommended configurations": rows, price band and Pareto chart.

Restates :func:`configurator.planning.recommend.recommendation_create` for the page: the
three cheapest configurations, each with a link that fills the form with it; an
indicative price band only when presales allow prices on the public page
(:class:`configurator.catalog.models.PublicPricing`), else the cost relative to the
cheapest; the Pareto front as SVG coordinates (plain numbers, never localized) with tick labels
in the page's language (:func:`configurator.numbers.num`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode

from django.urls import reverse
from django.utils.translation import gettext as _

from configurator.catalog.models import PublicPricing
from configurator.catalog.services import public_pricing
from configurator.numbers import num
from configurator.planning.recommend import (
    RecommendationResult,
    Recommended,
    recommendation_create,
)
from sizing.errors import SizingError
from sizing.search.space import LAYOUT_FIELDS

if TYPE_CHECKING:
    from configurator.inquiries.forms import WorkloadForm

BAND_ROUNDING_EUR = Decimal(100)
"""A public price band is rounded outward to whole hundreds of euros."""

CHART_W, CHART_H, PAD = 540, 250, 56
"""SVG width and height (drawn at this size, 9-unit text as in the TTFT chart) and the
margin for the axes, their tick labels and titles, in SVG units."""


@dataclass(frozen=True)
class Row:
    """One recommended configuration on the page.

    Attributes:
        item: the priced configuration.
        band_low_eur / band_high_eur: the indicative band, or ``None`` when prices are
            not shown publicly.
        fill_url: the configurator with this configuration filled in (``""`` for a
            private model, whose file a link cannot carry).
    """

    item: Recommended
    band_low_eur: Decimal | None
    band_high_eur: Decimal | None
    fill_url: str


@dataclass(frozen=True)
class Point:
    """One configuration of the front in SVG units (``x``, ``y`` as plain strings)."""

    x: str
    y: str
    label: str
    cheapest: bool


def _band(price: Decimal, policy: PublicPricing) -> tuple[Decimal | None, Decimal | None]:
    if not policy.show_price_band:
        return None, None
    share = Decimal(policy.band_percent) / 100
    low = (price * (1 - share) / BAND_ROUNDING_EUR).to_integral_value(ROUND_HALF_UP)
    high = (price * (1 + share) / BAND_ROUNDING_EUR).to_integral_value(ROUND_HALF_UP)
    return low * BAND_ROUNDING_EUR, high * BAND_ROUNDING_EUR


def fill_url(share_query: str, item: Recommended) -> str:
    """The configurator URL of ``share_query`` with ``item``'s layout (GPU, count, KV
    dtype, NVMe tier, TP, host memory, shared tier: :data:`LAYOUT_FIELDS`; ``""`` when
    ``share_query`` is empty)."""
    if not share_query:
        return ""
    pairs = dict(parse_qsl(share_query, keep_blank_values=True))
    for key in LAYOUT_FIELDS:
        pairs.pop(key, None)  # empty: the plan's own rule (a checkbox left unticked)
    pairs.update(item.layout_form_data)
    return f"{reverse('inquiries:configurator')}?{urlencode(pairs)}#estimate"


def rows(result: RecommendationResult, *, share_query: str, policy: PublicPricing) -> list[Row]:
    """The page's rows for the cheapest configurations."""
    return [
        Row(item, *_band(item.price_net_eur, policy), fill_url(share_query, item))
        for item in result.configurations
    ]


def _axis_value(item: Recommended, axis: str) -> float:
    c = item.config
    if axis == "ttft_p95_ms":
        return float(c.ttft_p95_ms or 0.0)
    if axis == "cpu_hit_rate":
        return float(c.cpu_hit_rate or 0.0)
    return float(c.resident_conversations)


@dataclass(frozen=True)
class ParetoChart:
    """The front in SVG units, with the axes' end values as tick labels.

    Attributes:
        points: one per configuration of the front, cheapest first.
        line: the ``points`` attribute of the line through them.
        x_min / x_max: the relative cost at the axis ends in the active language, with
            its unit (``"1.00 ×"``, German ``"1,00 ×"``).
        y_min / y_max: the second axis at its ends in the active language, with its unit
            (``"1,129 ms"``, ``"36 %"``, ``"51"`` conversations).
        axis: the second axis (``ttft_p95_ms``, ``cpu_hit_rate``, ``resident_conversations``).
    """

    points: tuple[Point, ...]
    line: str
    x_min: str
    x_max: str
    y_min: str
    y_max: str
    axis: str
    width: int = CHART_W
    height: int = CHART_H
    pad: int = PAD

    @property
    def plot_right(self) -> int:
        """The x of the plot's right edge."""
        return self.width - self.pad

    @property
    def plot_bottom(self) -> int:
        """The y of the plot's bottom edge."""
        return self.height - self.pad


def pareto_chart(result: RecommendationResult) -> ParetoChart | None:
    """The front as an SVG chart: x = cost relative to the cheapest, y = second axis.

    Coordinates are plain decimal strings (``"12.5"``), whatever the page's language;
    tick labels are in the active language; the axes run from the front's smallest to
    its largest value. ``None`` without a front.
    """
    front = result.pareto
    if not front:
        return None
    xs = [float(r.relative_cost) for r in front]
    ys = [_axis_value(r, result.axis) for r in front]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    cheapest = {id(r.config) for r in result.configurations}

    def sx(v: float) -> float:
        return PAD + (CHART_W - 2 * PAD) * ((v - x0) / (x1 - x0) if x1 > x0 else 0.5)

    def sy(v: float) -> float:
        return CHART_H - PAD - (CHART_H - 2 * PAD) * ((v - y0) / (y1 - y0) if y1 > y0 else 0.5)

    points = tuple(
        Point(
            f"{sx(x):.1f}",
            f"{sy(y):.1f}",
            f"{r.config.gpus} × {r.config.plan.gpu.name}",
            id(r.config) in cheapest,
        )
        for r, x, y in zip(front, xs, ys, strict=True)
    )
    return ParetoChart(
        points=points,
        line=" ".join(f"{p.x},{p.y}" for p in points),
        x_min=f"{num(x0, 2)} ×",
        x_max=f"{num(x1, 2)} ×",
        y_min=_axis_label(y0, result.axis),
        y_max=_axis_label(y1, result.axis),
        axis=result.axis,
    )


def _axis_label(value: float, axis: str) -> str:
    """A second-axis tick label with its unit, in the active language."""
    if axis == "ttft_p95_ms":
        return f"{num(value)} ms"
    if axis == "cpu_hit_rate":
        return f"{num(value * 100)} %"
    return num(value)


def _correct_first() -> dict[str, Any]:
    """The section's answer when the workload's inputs need correcting first."""
    return {
        "recommendation_problem": _(
            "Correct the inputs above first: the recommendation sizes the same workload."
        )
    }


def recommendations_context(form: WorkloadForm) -> dict[str, Any]:
    """What the "Recommended configurations" section shows for a bound workload form.

    ``recommendation_problem`` is a sentence when nothing can be recommended (an input
    has an error, or the price list carries no GPU); otherwise ``recommendation`` holds
    the result with its ``rows``, ``pareto`` chart and the price ``policy``. A workload
    whose inputs are all clean but whose requested layout cannot be sized (too little
    host memory on one node, a GPU too small) is searched all the same
    (:attr:`WorkloadForm.sized`): other layouts may serve it, as the JSON API answers.
    """
    form.is_valid()
    if form.sized is None:
        return _correct_first()
    workload, model = form.sized
    try:
        result = recommendation_create(
            workload, model=model, private_config=form.private_config, plan=form.plan
        )
    except SizingError as exc:
        if form.plan is None and exc.field != "gpus":
            return _correct_first()  # no layout searched sizes it either
        return {
            "recommendation_problem": _(
                "No GPU has a price yet, so nothing can be compared: ask us for a quote below."
            )
        }
    policy = public_pricing()
    return {
        "recommendation": result,
        "recommendation_rows": rows(result, share_query=form.share_query(), policy=policy),
        "pareto": pareto_chart(result),
        "price_policy": policy,
    }
