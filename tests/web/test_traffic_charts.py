"""The two traffic charts on the page and in the quote PDF: the CPU tier's hit rate
against its size per replica, and TTFT p95 against users with and without a tier.

Expected points are recomputed here from :mod:`sizing.serving.curves` for the seed
example (docs/sizing.md: Qwen3-32B-FP8, 8,192 tokens, 500 users, 4 × RTX PRO 6000 SE), whose
plan carries its traffic evaluator; the geometry is
:mod:`configurator.inquiries.traffic_chart`'s, the one place both surfaces use.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import cache as memoized
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client
from django.utils import translation
from fontTools.ttLib import TTFont

from configurator.inquiries import traffic_chart
from configurator.planning.services import plan_create
from configurator.quotes.document import document_from_quote
from configurator.quotes.pdf import quote_html, quote_pdf_render
from configurator.quotes.services import quote_create_from_inquiry
from sizing.serving.curves import hit_rate_curve, ttft_curve
from sizing.workload import SEED_WORKLOAD
from tests.conftest import ci_requires
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
    """The seed plan's curves from sizing.serving.curves at the sizes and user counts the
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
    assert plan_gib == pytest.approx(125.0)  # seed: 500 GiB tier over 4 replicas (docs/sizing.md)
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


def test_the_german_quote_pdf_labels_ticks_in_german() -> None:
    # The draft's language, whatever the request's: 1.000 to 2.000 users at the seed's
    # 500 (USER_SHARES 2 to 4), German separators (Django's de locale formats).
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(language="de"), user=None)
    with translation.override("en"):
        html = quote_html(document_from_quote(quote))
    users = re.search(r'class="traffic-users".*?</svg>', html, re.S)
    assert users is not None
    assert ">2.000</text>" in users.group(0) and ">2,000</text>" not in users.group(0)


def test_a_card_estimated_from_its_family_gets_traffic_charts(client: Client) -> None:
    # The L40S has no prefill measurement of its own: its plan is timed from the Hopper
    # class with its band (sizing/data/performance.json families), so it is sized under
    # traffic and the page draws the charts; without a served plan there are none.
    form = seed_form(gpu="l40s", gpus_per_node=8)
    response = client.post("/estimate/", form, headers={**HTMX})
    assert response.status_code == 200
    assert 'id="traffic-charts"' in response.content.decode()
    response = client.post("/estimate/traffic/", form, headers={**HTMX})
    assert response.status_code == 200
    assert 'class="hit-' in response.content.decode()
    assert traffic_chart.charts(None) == {}


@memoized
def _font() -> tuple[dict[str, float], float]:
    """The PDF's font (static/fonts/DejaVuSans.ttf): advance widths in em by character,
    and the line height pdftotext gives a word, in em (hhea ascent + descent)."""
    font = TTFont(Path(settings.BASE_DIR) / "static/fonts/DejaVuSans.ttf")
    upm = font["head"].unitsPerEm
    widths = {chr(c): font["hmtx"][g][0] / upm for c, g in font.getBestCmap().items()}
    return widths, (font["hhea"].ascent - font["hhea"].descent) / upm


def _overlaps(ticks: list[dict[str, str]], font_size: float = 9.0) -> list[tuple[str, str]]:
    """Neighbouring centred x-axis labels whose boxes (the font's advance widths) touch."""
    widths, _ = _font()

    def edges(t: dict[str, str]) -> tuple[float, float]:
        half = font_size * sum(widths[ch] for ch in t["label"]) / 2
        return float(t["pos"]) - half, float(t["pos"]) + half

    return [(a["label"], b["label"]) for a, b in pairwise(ticks) if edges(a)[1] >= edges(b)[0]]


@pytest.mark.parametrize("language", ["de", "en"])
def test_user_tick_labels_never_overlap(language: str) -> None:
    # 200,000 users: the counts drawn are 50,000 to 800,000 (USER_SHARES), six or seven
    # characters each a quarter of the plan's users apart, 31 SVG units.
    points = [
        {"users": round(200_000 * share), "with_ms": 100.0 * (i + 1), "without_ms": None}
        for i, share in enumerate(traffic_chart.USER_SHARES)
    ]
    with translation.override(language):
        ticks = traffic_chart.users_chart(points, 200_000)["x_ticks"]
    assert ticks[0]["label"] == ("50.000" if language == "de" else "50,000")
    assert ticks[-1]["label"] == ("800.000" if language == "de" else "800,000")
    assert not _overlaps(ticks)


def _printed_rows(data: bytes, tmp_path: Path) -> list[list[tuple[float, float, float, str]]]:
    """Each printed line of each page as (xMin, xMax, height, word) in points, left to
    right, from ``pdftotext -bbox``."""
    if not shutil.which("pdftotext"):
        ci_requires("pdftotext (poppler-utils)")
    path = tmp_path / "quote.pdf"
    path.write_bytes(data)
    out = subprocess.run(
        ["pdftotext", "-bbox", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout
    pattern = r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<'
    rows: list[list[tuple[float, float, float, str]]] = []
    for page in out.split("<page ")[1:]:
        lines: dict[str, list[tuple[float, float, float, str]]] = {}
        for x0, y0, x1, y1, word in re.findall(pattern, page):
            box = (float(x0), float(x1), float(y1) - float(y0), word)
            lines.setdefault(y0, []).append(box)
        rows.extend(sorted(line) for line in lines.values())
    return rows


def _printed_row(
    rows: list[list[tuple[float, float, float, str]]], labels: list[str]
) -> list[tuple[float, float, float, str]]:
    """The first printed line whose words, left to right, are ``labels`` (other words on
    it, such as the watermark's letters, left out)."""
    for row in rows:
        found = [w for w in row if w[3] in labels]
        if [w[3] for w in found] == labels:
            return found
    raise AssertionError(f"tick labels {labels} not printed on one line")


def test_the_quote_pdf_prints_traffic_tick_labels_readable_and_apart(tmp_path: Path) -> None:
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(language="en"), user=None)
    document = document_from_quote(quote)
    rows = _printed_rows(quote_pdf_render(document), tmp_path)
    _widths, line_em = _font()
    with translation.override("en"):
        drawn = traffic_chart.charts(document["alternatives"][0]["summary"]["traffic_curves"])
    for which in ("hit", "users"):
        row = _printed_row(rows, [t["label"] for t in drawn[which]["x_ticks"]])
        # Print size: the word's height over the font's line height (7 pt: the smallest
        # size the quote prints text at is 7.5 pt, print.css).
        sizes = [height / line_em for _x0, _x1, height, _w in row]
        assert min(sizes) >= 7.0, (which, sizes)
        assert all(a[1] < b[0] for a, b in pairwise(row)), which
