"""A returning user's TTFT on the page, in the PDF and in the bundle README.

Expected figures come from the performance model (sizing/performance, constants in
sizing/data/performance.json fitted on the published measurements); for the seed
example (Qwen3-32B FP8, 8,192 tokens, RTX PRO 6000, TP 1) a CPU-tier hit is 2× to 22×
sooner than a full prefill, the range the vLLM connector blog measured.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from configurator.inquiries.ttft_chart import chart
from configurator.quotes.document import document_from_quote
from configurator.quotes.pdf import quote_html
from configurator.quotes.services import quote_create_from_inquiry
from sizing.model.spec import from_catalog
from sizing.plan.orchestrator import make_plan
from sizing.summary import plan_summary
from tests.factories import plan_request
from tests.quote_factories import make_inquiry, make_presales
from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def _isolated(settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True
    cache.clear()


def _estimate(client: Client, language: str, **changes: Any) -> str:
    response = client.post(
        "/estimate/", seed_form(**changes), headers={**HTMX, "Accept-Language": language}
    )
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_shows_the_hit_figure_and_the_ttft_chart(client: Client) -> None:
    page = _estimate(client, "en")
    figure = re.search(r'id="figure-transfer">(.*?)</div>', page, re.S)
    assert figure is not None
    hit, miss, x = re.search(
        r"([\d,]+) ms from the CPU tier against ([\d,]+) ms for a full prefill.*?"
        r"comes ([\d.]+)× sooner",
        figure.group(1),
        re.S,
    ).groups()  # type: ignore[union-attr]
    assert 2 <= float(x) <= 22
    assert float(miss.replace(",", "")) > float(hit.replace(",", ""))
    # The calculation names the measurements it rests on.
    assert "vLLM blog 2026-01-08, figure 1" in figure.group(1)
    for kind in ("miss", "gpu", "cpu"):
        assert f'class="ttft-{kind}"' in page


def test_svg_numbers_are_not_localized(client: Client) -> None:
    page = _estimate(client, "de")
    points = re.findall(r'class="ttft-cpu" fill="none" stroke="#3b6ea8" stroke-width="2" '
                        r'points="([^"]+)"', page)  # fmt: skip
    assert points and all(re.fullmatch(r"\d+\.\d,\d+\.\d", p) for p in points[0].split())
    assert "Zeit bis zum ersten Token eines wiederkehrenden Nutzers" in page


@pytest.mark.parametrize(
    ("language", "contexts"),
    # The seed's curve runs from 1,024 tokens to twice its 8,192 (ttft_chart), doubling;
    # separators as the page's other numbers (Django's de and en locale formats).
    [("de", ["1.024", "2.048", "4.096", "8.192", "16.384"]),
     ("en", ["1,024", "2,048", "4,096", "8,192", "16,384"])],
)  # fmt: skip
def test_tick_labels_follow_the_language(
    client: Client, language: str, contexts: list[str]
) -> None:
    page = _estimate(client, language)
    svg = re.search(r'aria-label="[^"]*"[^>]*>(.*?)</svg>', page.split("ttft-chart", 1)[1], re.S)
    assert svg is not None
    x_labels = re.findall(r'<text x="[\d.]+" y="201" font-size="11" text-anchor="middle">'
                          r"([^<]+)</text>", svg.group(1))  # fmt: skip
    assert x_labels == contexts
    comma = "," if language == "de" else "."
    # Times on a log scale: whole decades, none with a stray separator of the other
    # language.
    y_labels = re.findall(r'text-anchor="end" dominant-baseline="middle">([^<]+)<', svg.group(1))
    assert y_labels and all(re.fullmatch(rf"[\d{re.escape(comma)}]+ m?s", t) for t in y_labels)


def test_a_gpu_without_its_own_measurement_shows_its_estimate_and_band(client: Client) -> None:
    # The L40S has no prefill measurement: its figures are the Ada family's estimate
    # (sizing/data/performance.json families, ±56 %) and the page says so in either
    # language (configurator/inquiries/explain/ttft.py, German in configurator/locale/de).
    english = _estimate(client, "en", gpu="l40s", gpus_per_node=8)
    assert "no measured basis for prefill" not in english
    assert 'class="ttft-' in english  # the chart is drawn from the estimate
    assert (
        "estimated: no prefill measurement on NVIDIA L40S; the efficiencies measured on the "
        "nearest card of its architecture are applied to its datasheet rates, so its times "
        "may lie 56 % either way"
    ) in english
    german = _estimate(client, "de", gpu="l40s", gpus_per_node=8)
    assert "geschätzt: keine Prefill-Messung auf NVIDIA L40S" in german
    assert "um 56 % nach oben oder unten abweichen" in german


def test_the_chart_needs_two_points_and_marks_the_plans_context() -> None:
    assert chart([]) == {}
    curve = [
        {"context_tokens": 1024, "miss_ms": 100.0, "hit_ms": {"cpu": 40.0, "nvme": None}},
        {"context_tokens": 8192, "miss_ms": 1000.0, "hit_ms": {"cpu": 90.0, "nvme": None}},
    ]
    c = chart(curve, 8192)
    assert [line["kind"] for line in c["lines"]] == ["miss", "cpu"]
    assert c["marker"] == "520.0"  # the right edge of the plot
    assert [t["label"] for t in c["y_ticks"]] == ["10 ms", "100 ms", "1 s"]


def test_pdf_and_bundle_readme_quote_the_ttft_and_its_basis() -> None:
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    html = quote_html(document_from_quote(quote))
    assert "What a hit is worth" in html and 'class="ttft-cpu"' in html
    assert "measured 2026-05-30 on one H20" in html  # agentic-kvc-h20-tiers
    plan = make_plan(
        plan_request(model=from_catalog("Qwen/Qwen3-32B-FP8"), context_tokens=8192, users=500)
    )
    s = plan_summary(plan)
    assert s["ttft_hit_ms"]["cpu"] < s["ttft_miss_ms"]
    assert "vllm-blog-ttft-sweep" in s["performance_basis"]
    from django.template.loader import render_to_string

    readme = render_to_string(
        "deployments/README.md",
        {"summary": s, "d": None, "notes": [], "versions": [], "files": []},
    )
    assert f"towards {round(s['ttft_hit_ms']['cpu']):,} ms (CPU-tier hit" in readme


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", "estimated from another card's measurement: ±56 %"),
        ("de", "geschätzt aus der Messung einer anderen Karte: ±56 %"),
    ],
)
def test_the_pdf_shows_the_band_of_a_card_estimated_from_its_family(
    language: str, said: str
) -> None:
    # The seed on 8 × L40S: no prefill measurement of its own, the Hopper class's estimate
    # with the across-family band (sizing/data/performance.json families, ±56 %), and the
    # full prefill's TTFT at the band's two ends (ttft_miss_range_ms).
    make_presales()
    inquiry = make_inquiry(gpu="l40s", gpus_per_node=8, language=language)
    s = inquiry.plan_summary
    assert s["ttft_band_pct"] == 56
    low, high = s["ttft_miss_range_ms"]
    assert low == pytest.approx(s["ttft_miss_ms"] / 1.56, abs=0.1)
    assert high == pytest.approx(s["ttft_miss_ms"] * 1.56, abs=0.1)
    quote = quote_create_from_inquiry(inquiry=inquiry, user=None)
    html = quote_html(document_from_quote(quote))
    assert said in html
