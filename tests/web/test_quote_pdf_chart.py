"""The seed quote's PDF in German and English: the tier chart is drawn, stays with its
rationale, and the text names sources a customer can look up.

The seed example (docs/sizing.md: Qwen3-32B-FP8, 8,192 tokens, 500 users, 4 × RTX PRO 6000
SE, 2,000 new conversations a day) has three tiers: GPU, CPU memory and NVMe. Their bar
colours are the fills of ``templates/pdf/_tiers.svg``.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image
from pypdf import PdfReader

from configurator.quotes.document import document_from_quote
from configurator.quotes.pdf import quote_pdf_render
from configurator.quotes.services import quote_create_from_inquiry, quote_issue
from configurator.verification.services import benchmarks_load_initial, verification_run
from tests.conftest import ci_requires
from tests.quote_factories import make_inquiry, make_presales

pytestmark = pytest.mark.django_db

BAR_COLOURS = {"gpu": (0x2F, 0x6F, 0x4F), "cpu": (0x3B, 0x6E, 0xA8), "nvme": (0x9A, 0x6B, 0x2F)}
CAPTION = {"en": "Memory tiers of one node", "de": "Speicherstufen eines Knotens"}
RUNNING_HEAD_PT = 60  # print.css: 24 mm top margin holds the running head
CHART_HEIGHT_PT = 20 + 48 * 3  # three 48 px rows (document.CHART_ROW_PX) at 0.75 pt/px, with room


def seed_pdf(language: str) -> bytes:
    """The issued seed quote, verified against the bundled measurements, as PDF bytes."""
    make_presales()
    benchmarks_load_initial()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(language=language), user=None)
    verification_run(quote_id=quote.pk)
    return quote_pdf_render(document_from_quote(quote_issue(quote=quote)))


def word_boxes(pdf_path: Path, page: int) -> list[tuple[float, float, str]]:
    """(x, y, word) in points of every word on ``page`` (1-based), from ``pdftotext -bbox``."""
    out = subprocess.run(
        ["pdftotext", "-f", str(page), "-l", str(page), "-bbox", str(pdf_path), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pattern = r'<word xMin="([\d.]+)" yMin="([\d.]+)"[^>]*>([^<]*)</word>'
    return [(float(x), float(y), word) for x, y, word in re.findall(pattern, out)]


@pytest.mark.parametrize("language", ["de", "en"])
def test_tier_chart_bars_are_drawn_below_their_rationale(language: str, tmp_path: Path) -> None:
    if not shutil.which("pdftoppm"):
        ci_requires("pdftoppm (poppler-utils)")
    data = seed_pdf(language)
    pages = [p.extract_text() for p in PdfReader(io.BytesIO(data)).pages]
    chart_pages = [n for n, text in enumerate(pages, start=1) if CAPTION[language] in text]
    assert chart_pages, "no tier chart in the PDF"
    pdf_path = tmp_path / "quote.pdf"
    pdf_path.write_bytes(data)
    first = chart_pages[0]
    subprocess.run(
        [
            "pdftoppm",
            "-f",
            str(first),
            "-l",
            str(first),
            "-r",
            "72",
            "-png",
            str(pdf_path),
            str(tmp_path / "page"),
        ],
        check=True,
    )
    image = Image.open(next(tmp_path.glob("page*.png"))).convert("RGB")
    words = word_boxes(pdf_path, first)
    x, y = next((x, y) for x, y, w in words if w == CAPTION[language].split()[0])
    top = y - CHART_HEIGHT_PT
    # The chart does not open a page of its own: the rationale's text (its table or its
    # verdict) is printed above it on the same page, below the running head.
    above = [w for _x, wy, w in words if RUNNING_HEAD_PT < wy < top]
    assert len(above) >= 10, f"the {language} tier chart starts its own page"
    area = image.crop((int(x), max(0, int(top)), image.width, int(y)))
    pixels = list(area.get_flattened_data())
    for kind, colour in BAR_COLOURS.items():
        drawn = sum(
            1 for p in pixels if all(abs(a - b) <= 12 for a, b in zip(p, colour, strict=True))
        )
        # A bar is 26 px × 0.75 high and at least a third of 300 px × 0.75 wide.
        assert drawn > 19 * 70, f"{kind} bar not drawn in the {language} chart ({drawn} px)"


@pytest.mark.parametrize("language", ["de", "en"])
def test_pdf_names_sources_a_customer_can_look_up(language: str) -> None:
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(seed_pdf(language))).pages)
    for placeholder in ("Seed document", "Seed-Dokument", "name not recorded"):
        assert placeholder not in text
    assert "config.json" in text  # the model's own configuration, on the Hub
