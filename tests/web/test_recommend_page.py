"""The customer page's "Recommended configurations" section (htmx partial and plain POST)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.core.cache import cache
from django.http import QueryDict
from django.test import Client

from configurator.catalog.models import PublicPricing
from configurator.catalog.services import pricelist_load_demo
from configurator.inquiries.forms import WorkloadForm
from configurator.planning.recommend import recommendation_create
from sizing.summary import plan_summary
from sizing.workload import Workload
from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
EN = {"Accept-Language": "en"}
DE = {"Accept-Language": "de"}
# The seed workload (docs/sizing.md) with users taking turns (no active share given).
SEED = seed_form(active_share="")


@pytest.fixture(autouse=True)
def _isolated(settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True
    cache.clear()
    pricelist_load_demo()


def _rows(html: str) -> list[str]:
    body = re.search(r'<table class="recommended">.*?<tbody>(.*?)</tbody>', html, re.S)
    assert body, "no recommendation table"
    return re.findall(r'<tr>\s*<th scope="row">(.*?)</th>', body.group(1), re.S)


def test_three_cheapest_with_relative_cost_and_a_link_each(client: Client) -> None:
    response = client.post("/recommendations/", SEED, headers={**HTMX, **EN})
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<section id="recommendations"')
    assert len(_rows(html)) == 3
    # No price policy stored: relative cost only, never a euro figure (catalog.PublicPricing).
    assert "1.00 ×" in html and "€" not in html
    links = re.findall(r'href="(/\?[^"]+)">Use this configuration', html)
    assert len(links) == 3
    assert all("gpu=" in link and "gpus_per_node=" in link for link in links)
    # Following a link fills the form with that configuration.
    page = client.get(links[0].replace("&amp;", "&"), headers=EN).content.decode()
    slug = re.search(r"gpu=([\w.-]+)", links[0]).group(1)  # type: ignore[union-attr]
    assert re.search(rf'<option value="{re.escape(slug)}" selected>', page)
    # 42,320 (2 × RTX PRO 6000 Max-Q) against the requested layout's 66,910 EUR
    # (tests/web/test_recommend.py): (66,910 - 42,320) / 66,910 = 36.8 % → "37 %" (nearest
    # whole percent).
    assert "37 % below the requested layout (4 × NVIDIA RTX PRO 6000" in html
    # The link carries the searched layout: the cheapest caps host memory at 384 GB.
    assert "max_host_memory_gb=384" in links[0]
    assert "Blackwell Workstation Edition" not in html  # the open-air card; the Max-Q is a blower
    assert '<svg viewBox="0 0 540 250" width="540" height="250"' in html
    assert 'class="front"' in html
    # The chart says what its axes are and in which units (templates/inquiries/configurator.html).
    svg = re.search(r"<svg.*?</svg>", html, re.S).group(0)  # type: ignore[union-attr]
    assert "Cost against the cheapest (×)</text>" in svg
    assert re.search(r">1\.00 ×</text>", svg)
    assert re.search(
        r">(TTFT p95 in ms|CPU-tier hit rate|conversations resident on the GPUs)</text>", svg
    )
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]+)</text>', svg)
    assert len(ticks) == 4 and all(re.search(r"(×|ms|%|\d)$", t) for t in ticks)


def test_price_band_when_presales_allow_it(client: Client) -> None:
    PublicPricing.objects.create(pk=1, show_price_band=True, band_percent=10)
    html = client.post("/recommendations/", SEED, headers={**HTMX, **EN}).content.decode()
    # At demo prices (demo_prices.csv), 2 × RTX PRO 6000 Server Edition (the Workstation
    # Edition does not go into the 4U server, hardware.json ``chassis``), 24 × 16 GB (the
    # smallest layout that meets twice the GPUs' 192 GB), no NVMe = GPUs 17,800 + chassis
    # 9,800 + CPUs 7,300 + DIMMs 24 × 95 = 2,280 + PSUs 1,040 + NIC 890 + boot 290 +
    # services 3,520 = 42,920.00 EUR net; ±10 % → 38,628 to 47,212 EUR, to whole hundreds
    # (BAND_ROUNDING_EUR) → 38,600 to 47,200 EUR. The cheapest, the same with 2 × Max-Q
    # (2 × 8,600 = 17,200 for the GPUs): 42,320.00 EUR → 38,088 to 46,552 → 38,100 to
    # 46,600 EUR.
    assert "38,600 – 47,200 €" in html
    assert "38,100 – 46,600 €" in html


def test_german_page_keeps_svg_numbers_plain(client: Client) -> None:
    html = client.post("/recommendations/", SEED, headers={**HTMX, **DE}).content.decode()
    assert "Empfohlene Konfigurationen" in html
    assert "1,00 ×" in html
    svg = re.search(r"<svg.*?</svg>", html, re.S).group(0)  # type: ignore[union-attr]
    coords = re.findall(r'\s(?:cx|cy|x|y|x1|x2|y1|y2)="([^"]+)"', svg)
    assert coords and all(re.fullmatch(r"-?\d+(\.\d+)?", c) for c in coords)
    # Its labels are German: decimal commas (configurator/numbers.py), German axis titles
    # (configurator/locale/de/LC_MESSAGES/django.po).
    assert ">1,00 ×</text>" in svg and ">1.00 ×" not in svg
    assert "Kosten gegenüber der günstigsten (×)</text>" in svg
    # The line's points are "x,y x,y": a comma only between x and y, dots for decimals.
    points = re.search(r'points="([^"]+)"', svg).group(1)  # type: ignore[union-attr]
    assert re.fullmatch(r"\d+\.\d,\d+\.\d( \d+\.\d,\d+\.\d)*", points)


def test_an_estimate_after_recommendations_clears_them_and_offers_the_search_again(
    client: Client,
) -> None:
    shown = client.post("/recommendations/", SEED, headers={**HTMX, **EN}).content.decode()
    marker = '<input type="hidden" name="recommendations_shown" value="1">'
    assert marker in shown
    # The live estimate for a changed input, posted with the shown section's marker: the
    # section is swapped out of band without its table or links, the button stays.
    changed = {**SEED, "users": 5000, "recommendations_shown": "1"}
    html = client.post("/estimate/", changed, headers={**HTMX, **EN}).content.decode()
    section = re.search(r'<section id="recommendations".*?</section>', html, re.S)
    assert section, "the estimate does not replace the recommendations"
    oob = section.group(0)
    assert 'hx-swap-oob="true"' in oob and "Find the cheapest configurations" in oob
    assert "The inputs changed" in oob
    assert "Use this configuration" not in oob
    assert '<table class="recommended">' not in oob and marker not in oob
    # Before any recommendation is shown, the estimate leaves the section alone.
    quiet = client.post("/estimate/", {**SEED, "users": 5000}, headers={**HTMX, **EN})
    assert '<section id="recommendations"' not in quiet.content.decode()


def test_nothing_fits_names_the_binding_target_not_a_500(client: Client) -> None:
    # 5,000 users all active at once: no node on the price list holds them on its GPUs.
    data = seed_form(users=5000, active_share=100)
    response = client.post("/recommendations/", data, headers={**HTMX, **EN})
    html = response.content.decode()
    assert response.status_code == 200
    assert "No configuration on our price list serves this workload" in html
    assert "GPU capacity for active users" in html
    assert "The nearest is" in html and "Misses the target" in html


def test_bad_input_asks_for_a_correction(client: Client) -> None:
    response = client.post("/recommendations/", seed_form(users=0), headers={**HTMX, **EN})
    assert response.status_code == 200
    assert "Correct the inputs above first" in response.content.decode()
    plain = client.post("/recommendations/", seed_form(users=0), headers=EN)
    assert plain.status_code == 400


def test_plain_post_renders_the_whole_page(client: Client) -> None:
    response = client.post("/recommendations/", SEED, headers=EN)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" in html and "Your estimate" in html and len(_rows(html)) == 3


@pytest.mark.parametrize(
    ("headers", "replicas", "trade"),
    [
        (
            EN,
            r"Without the CPU tier these GPUs would need [\d,]+ replicas instead of [\d,]+ "
            r"to keep this configuration’s TTFT p95 of [\d,]+ ms\.",
            r"still meets the TTFT p95 target of [\d,]+ ms is \d+ × [^,]+, [\d.]+ times the "
            r"cost of the cheapest\. It only has to reach the target",
        ),
        (
            DE,
            r"Ohne die CPU-Speicherstufe bräuchten diese GPUs [\d.]+ Replikate statt [\d.]+, "
            r"um die TTFT p95 dieser Konfiguration von [\d.]+ ms zu halten\.",
            r"das Ziel für die TTFT p95 von [\d.]+ ms noch erreicht, \d+ × [^,]+, das "
            r"[\d,]+-Fache der Kosten der günstigsten\. Sie muss nur das Ziel erreichen",
        ),
    ],
)
def test_replicas_without_a_tier_and_the_cheapest_without_one_say_why_both_hold(
    client: Client, headers: dict[str, str], replicas: str, trade: str
) -> None:
    # The replicas sentence keeps one configuration's own TTFT p95 on its own GPUs; the
    # trade names the cheapest configuration of any GPU that only meets the target.
    html = client.post("/recommendations/", SEED, headers={**HTMX, **headers}).content.decode()
    html = html.replace("&#x27;", "’").replace("'", "’")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert re.search(replicas, text), text[:3000]
    assert re.search(trade, text)


def _table_rows(html: str) -> list[tuple[list[str], str]]:
    """Each configuration's cells (tags stripped) and the text of its "why" row."""
    body = re.search(r'<table class="recommended">.*?<tbody>(.*?)</tbody>', html, re.S)
    assert body, "no recommendation table"

    def text(cell: str) -> str:
        return " ".join(re.sub(r"<[^>]+>", " ", cell).split())

    pairs = re.findall(r"<tr>(.*?)</tr>\s*<tr class=\"why\">(.*?)</tr>", body.group(1), re.S)
    return [
        ([text(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)], text(why))
        for row, why in pairs
    ]


@pytest.mark.parametrize(
    ("headers", "column", "none", "shared_words", "hits"),
    [
        (
            EN,
            "Shared tier",
            "none",
            "keeps 178 more warm, as much as the host memory holds; a shared tier of 0.5 TB "
            "(NFS/pNFS or S3) holds the other 188, reloaded instead of recomputed",
            "% of returning users reload from the shared tier; no measured basis: its read "
            "time is timed from one 100 GbE port per node.",
        ),
        (
            DE,
            "Gemeinsame Stufe",
            "keine",
            "hält 178 weitere warm, so viele der Hauptspeicher fasst; eine gemeinsame Stufe "
            "von 0,5 TB (NFS/pNFS oder S3) hält die übrigen 188",
            "% der zurückkehrenden Nutzer laden aus der gemeinsamen Stufe nach; keine gemessene "
            "Grundlage: ihre Lesezeit ist aus einem 100-GbE-Port je Knoten berechnet.",
        ),
    ],
)
def test_the_shared_tier_has_its_own_column_and_its_conversations(
    client: Client,
    headers: dict[str, str],
    column: str,
    none: str,
    shared_words: str,
    hits: str,
) -> None:
    # Seed workload at demo prices (tests/web/test_recommend.py): the cheapest two are the
    # same 2 × RTX PRO 6000 with 24 × 16 GB and no NVMe, the second with a shared tier
    # (+ 1 TB of STO-KV-SHARED-TB). Its CPU tier holds 178 of the 1 GiB conversations
    # (178 GiB), the GPUs 134; the other 500 - 134 - 178 = 188 rest in the shared tier,
    # which holds every user once: 500 × 2^30 B = 0.54 TB, shown as 0.5 TB. The cheapest
    # recomputes those 188 instead: no shared tier in its words.
    html = client.post("/recommendations/", SEED, headers={**HTMX, **headers}).content.decode()
    head = re.search(r'<table class="recommended">\s*<thead>(.*?)</thead>', html, re.S)
    assert head and f'<th scope="col">{column}</th>' in head.group(1)
    (first, first_why), (second, second_why) = _table_rows(html)[:2]
    assert first[:3] == second[:3]  # same GPUs, DIMMs and NVMe column
    assert first[3] == none and second[3] in ("0.5 TB", "0,5 TB")
    assert shared_words in second_why and "NFS/pNFS" not in first_why
    # The returns it serves (its plan's hit share, tests/web/test_recommend.py).
    assert re.search(r"\b\d+ " + re.escape(hits), second_why) and hits not in first_why


def test_a_recommendation_without_nvme_keeps_the_customers_new_conversations(
    client: Client,
) -> None:
    # The seed asks for 2,000 new conversations a day (seed_form); the search tries each
    # layout without the NVMe tier too (sizing/search/space.py), and the seed's cheapest
    # has none (manage.py recommend on the seed: its nvme_tb is 0).
    html = client.post("/recommendations/", SEED, headers={**HTMX, **EN}).content.decode()
    links = [
        link.replace("&amp;", "&")
        for link in re.findall(r'href="(/\?[^"]+)">Use this configuration', html)
    ]
    off = [link for link in links if "without_nvme_tier=on" in link]
    assert off, links
    query = QueryDict(urlsplit(off[0]).query)
    assert query["new_conversations_per_day"] == "2000"
    # The filled form keeps the customer's figure and ticks the box.
    page = client.get(off[0], headers=EN).content.decode()
    assert re.search(r'name="new_conversations_per_day" value="2000"', page)
    assert re.search(r'<input type="checkbox" name="without_nvme_tier"[^>]*checked', page)
    # Its estimate is the recommended configuration: the same plan, no NVMe drive.
    form = WorkloadForm.from_query(query)
    assert form.is_valid(), form.errors
    assert form.plan is not None and form.plan.nvme.drive is None
    assert "no NVMe tier asked for" in page
    seed = WorkloadForm(SEED)
    assert seed.is_valid(), seed.errors
    result = recommendation_create(seed.workload(seed.cleaned_data, model=SEED["model"]))
    recommended = [
        r.config.plan
        for r in result.configurations
        if Workload.from_json(r.inputs) == form.plan.request.workload
    ]
    assert [plan_summary(p) for p in recommended] == [plan_summary(form.plan)]


def test_a_requested_layout_that_cannot_be_sized_is_still_searched(client: Client) -> None:
    # Qwen3-8B at 40,960 tokens on one L4: a conversation needs 2.81 GiB per GPU, the L4
    # leaves 1.98 GiB beside the weights (tests/web/test_sizing_errors_i18n.py
    # LAYOUT_LIMITS): the requested layout cannot be sized, larger GPUs can. Every input
    # is clean, so the search runs as the JSON API's does (POST /api/recommendations) and
    # shows the same configurations.
    changes = {"model": "Qwen/Qwen3-8B", "gpu": "l4", "gpus_per_node": 1}
    changes |= {"context_tokens": 40_960}
    data = seed_form(**changes, active_share="")
    estimate = client.post("/estimate/", data, headers={**HTMX, **EN}).content.decode()
    assert "only 1.98 GiB per NVIDIA L4 is left for the KV cache" in estimate
    html = client.post("/recommendations/", data, headers={**HTMX, **EN}).content.decode()
    assert "Correct the inputs above first" not in html
    api = client.post(
        "/api/recommendations",
        {**seed_form(**changes), "active_share": None},
        content_type="application/json",
    ).json()["configurations"]
    shown = _rows(html)
    assert len(shown) == len(api) > 0
    for row, config in zip(shown, api, strict=True):
        # The row names the node count when there are several
        # (templates/inquiries/configurator.html).
        nodes = f"{config['nodes']} × " if config["nodes"] > 1 else ""
        assert f"{nodes}{config['gpus_per_node']} × {config['gpu_name']}<br>" in row
