"""The two traffic charts on the page and in the quote PDF: the CPU tier's hit rate
against its size per replica, and TTFT p95 against users with and without a tier.

Expected points are recomputed here from :mod:`sizing.traffic_curves` for the seed
example (DESIGN §3: Qwen3-32B-FP8, 8,192 tokens, 500 users, 4 × RTX PRO 6000 SE), whose
plan carries its traffic evaluator; the geometry is
:mod:`configurator.inquiries.traffic_chart`'s, the one place both surfaces use.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from configurator.inquiries import traffic_chart
from configurator.planning.services import plan_create
from configurator.quotes.document import document_from_quote
from configurator.quotes.pdf import quote_html
from configurator.quotes.services import quote_create_from_inquiry
from sizing.traffic_curves import hit_rate_curve, ttft_curve
from sizing.workload import SEED_WORKLOAD
from tests.quote_factories import make_inquiry, make_presales
from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def _isolated(settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True
    cache.clear()


def _points(html: str, cls: str) -> list[tuple[float, float]]:
    found = re.search(rf'class="{cls}" fill="none" stroke="#[0-9a-f]+" stroke-width="2" '
                      r'points="([^"]+)"', html)  # fmt: skip
    assert found is not None, cls
    return [(float(x), float(y)) for x, y in (p.split(",") for p in found.group(1).split())]


def _expected() -> tuple[list[tuple[float, float]], list[tuple[float, float]], float]:
    """The seed plan's curves from sizing.traffic_curves at the sizes and user counts the
    charts use, as chart coordinates; and the plan's CPU tier per replica (GiB)."""
    plan = plan_create(SEED_WORKLOAD)
    assert plan.serving is not None
    gib = plan.cpu_tier.per_instance_gib
    sizes = [2 * gib * i / (traffic_chart.POINTS - 1) for i in range(traffic_chart.POINTS)]
    hits = hit_rate_curve(plan.serving, sizes, kv_bytes_per_token=plan.kv_bytes_per_token)
    width = traffic_chart.RIGHT - traffic_chart.LEFT
    height = traffic_chart.BOTTOM - traffic_chart.TOP
    hit_xy = [
        (traffic_chart.LEFT + s / sizes[-1] * width, traffic_chart.BOTTOM - p.cpu * height)
        for s, p in zip(sizes, hits, strict=True)
    ]
    users = sorted({round(500 * share) for share in traffic_chart.USER_SHARES})
    ttft = ttft_curve(plan.serving, users, plan_users=500)
    ttft_ms = [p.ttft_p95_ms for p in ttft]
    return hit_xy, [(float(n), ms) for n, ms in zip(users, ttft_ms, strict=True)], gib


def _check(html: str) -> None:
    hit_xy, ttft, plan_gib = _expected()
    drawn = _points(html, "hit-cpu")
    assert len(drawn) == len(hit_xy)
    for (x, y), (ex, ey) in zip(drawn, hit_xy, strict=True):
        assert x == pytest.approx(ex, abs=0.1) and y == pytest.approx(ey, abs=0.2)
    # The knee: up to the plan's tier each step buys far more hit rate than any step
    # beyond it, where the curve flattens (each step under 5 % of the plot's height).
    rises = [y0 - y1 for (_x0, y0), (_x1, y1) in pairwise(drawn)]
    knee = len(drawn) // 2  # the plan's tier is the middle point of 0..2 × tier
    assert max(rises[:knee]) > 4 * max(rises[knee:])
    assert all(r < 0.05 * (traffic_chart.BOTTOM - traffic_chart.TOP) for r in rises[knee:])
    assert plan_gib == pytest.approx(125.0)  # seed: 500 GiB tier over 4 replicas (DESIGN §3)
    with_tier = _points(html, "users-with")
    without = _points(html, "users-without")
    assert len(with_tier) == len(ttft)  # the tier keeps up at every count drawn
    assert len(without) < len(ttft)  # without it the GPUs fall behind before 4 × users
    # TTFT rises with users and the tier keeps it lower (SVG y grows downwards; both lines
    # share one log scale).
    assert all(a[1] >= b[1] for a, b in pairwise(with_tier))
    assert all(w[1] <= t[1] for w, t in zip(without, with_tier, strict=False))
    assert sorted(ms for _n, ms in ttft) == [ms for _n, ms in ttft]
    span = traffic_chart.RIGHT - traffic_chart.LEFT
    for (x, _y), (n, _ms) in zip(with_tier, ttft, strict=True):
        assert x == pytest.approx(traffic_chart.LEFT + (n - 125) / (2000 - 125) * span, abs=0.1)
    assert all(re.fullmatch(r"\d+\.\d,\d+\.\d", f"{x:.1f},{y:.1f}") for x, y in drawn)


def test_the_page_draws_both_traffic_charts(client: Client) -> None:
    # The live estimate leaves a placeholder that loads the charts when it comes into
    # view; the fragment it posts to draws them.
    headers = {**HTMX, "Accept-Language": "de"}
    response = client.post("/estimate/", seed_form(), headers=headers)
    assert response.status_code == 200
    estimate = response.content.decode()
    assert 'id="traffic-charts"' in estimate and 'hx-trigger="intersect once"' in estimate
    assert 'hx-post="/estimate/traffic/"' in estimate and 'class="hit-' not in estimate
    response = client.post("/estimate/traffic/", seed_form(), headers=headers)
    assert response.status_code == 200
    page = response.content.decode()
    _check(page)
    assert "GiB CPU-Stufe je Replikat" in page and "ohne Stufe" in page


def test_the_whole_page_draws_both_traffic_charts_inline(client: Client) -> None:
    # Without htmx (a shared link, or a browser without JavaScript) the charts are inline.
    response = client.get("/", seed_form(), headers={"Accept-Language": "en"})
    assert response.status_code == 200
    page = response.content.decode()
    _check(page)
    assert 'id="traffic-charts"' not in page


def test_the_quote_pdf_draws_both_traffic_charts() -> None:
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(language="en"), user=None)
    html = quote_html(document_from_quote(quote))
    _check(html)
    assert "GiB of CPU tier per replica" in html and "without a tier" in html


def test_no_traffic_charts_without_a_measured_basis(client: Client) -> None:
    form = seed_form(gpu="l40s", gpus_per_node=8)
    response = client.post("/estimate/", form, headers={**HTMX})
    assert response.status_code == 200
    assert 'id="traffic-charts"' not in response.content.decode()
    response = client.post("/estimate/traffic/", form, headers={**HTMX})
    assert response.status_code == 200
    assert 'class="hit-' not in response.content.decode()
    assert traffic_chart.charts(None) == {}
