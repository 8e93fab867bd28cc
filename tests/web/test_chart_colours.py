"""One tier, one colour, and axis text large enough to read: the page's occupancy bar
(``static/css/site.css``), the TTFT and traffic line charts of the page and the PDF,
and the PDF's memory-tier chart (``templates/pdf/_tiers.svg``).

A product review found the GPU and the CPU tier swapped between the occupancy bar and
the TTFT chart (blue and green), and the charts' axis labels at 9 SVG units.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db
ROOT = Path(settings.BASE_DIR)
TIERS = ("gpu", "cpu", "nvme", "shared")


def css_tier_colours() -> dict[str, str]:
    """The tiers' colours of the occupancy bar: ``--gpu`` … in site.css's ``:root``."""
    css = (ROOT / "static/css/site.css").read_text()
    root = re.search(r":root\s*\{(.*?)\}", css, re.S)
    assert root is not None
    found = dict(re.findall(r"--(\w+):\s*(#[0-9a-fA-F]{6})", root.group(1)))
    return {tier: found[tier].lower() for tier in TIERS}


def estimate(client: Client) -> str:
    """The seed estimate with its traffic charts (which the page fetches after it)."""
    headers = {"HX-Request": "true", "Accept-Language": "en"}
    parts = [client.post(path, seed_form(), headers=headers) for path in PATHS]
    assert all(part.status_code == 200 for part in parts)
    return "".join(part.content.decode() for part in parts)


PATHS = ("/estimate/", "/estimate/traffic/")


def line_colours(page: str) -> dict[str, str]:
    """Each line's stroke by its class (``ttft-gpu``, ``hit-cpu`` …)."""
    lines = re.findall(r'<polyline class="([\w-]+)" fill="none" stroke="(#\w+)"', page)
    return {name: colour.lower() for name, colour in lines}


def test_each_tier_has_one_colour_on_the_page_and_in_the_pdf(client: Client) -> None:
    bar = css_tier_colours()
    # The seed example draws GPU and CPU lines in both charts.
    lines = line_colours(estimate(client))
    assert {"ttft-gpu", "ttft-cpu", "hit-gpu", "hit-cpu"} <= set(lines)
    for name, colour in lines.items():
        tier = name.split("-", 1)[1]
        if tier in bar:
            assert colour == bar[tier], name
    pdf = (ROOT / "templates/pdf/_tiers.svg").read_text()
    fills = dict(re.findall(r"bar\.kind == '(\w+)' %\}(#\w+)", pdf))
    assert {tier: colour.lower() for tier, colour in fills.items()} == {
        tier: bar[tier] for tier in fills
    }
    assert set(fills) == {"gpu", "cpu", "shared"}  # NVMe is the template's last branch
    nvme = re.search(r"\{% else %\}(#\w+)\{% endif %\}", pdf)
    assert nvme is not None and nvme.group(1).lower() == bar["nvme"]


def test_the_axis_labels_of_the_line_charts_are_11_units(client: Client) -> None:
    page = estimate(client)
    charts = re.findall(r"<svg [^>]*role=\"img\"[^>]*>(.*?)</svg>", page, re.S)
    axes = [c for c in charts if "<polyline" in c]
    assert len(axes) == 3  # TTFT, hit rate, TTFT p95 against users
    for chart in axes:
        # every text but the legend's (the <g class="legend-…"> entries)
        outside_legend = re.sub(r'<g class="legend-[^"]*">.*?</g>', "", chart, flags=re.S)
        sizes = re.findall(r'<text [^>]*font-size="([\d.]+)"', outside_legend)
        assert sizes and all(float(size) >= 11 for size in sizes)
