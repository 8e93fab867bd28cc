"""The quote PDF (WeasyPrint): its text, layout rules, languages and the CLI.

Expected figures: the seed example (docs/sizing.md: 24 × 48 GB, vLLM --kv-offloading-size
125) priced with configurator/catalog/data/demo_prices.csv (66,910.00 EUR net, VAT 19 %
12,712.90, gross 79,622.90; the sum is spelled out in tests/web/test_quotes.py).
"""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from pypdf import PdfReader

from configurator.catalog.models import Price
from configurator.quotes.document import document_from_quote
from configurator.quotes.models import Quote
from configurator.quotes.pdf import (
    charts_as_images,
    quote_html,
    quote_pdf_render,
)
from configurator.quotes.services import quote_create_from_inquiry, quote_issue, quote_line_add
from configurator.verification.models import VerificationReport, VerificationStatus
from tests.conftest import ci_requires
from tests.quote_factories import make_inquiry, make_presales

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"

pytestmark = pytest.mark.django_db


def pdf_pages(data: bytes) -> list[str]:
    return [page.extract_text() for page in PdfReader(io.BytesIO(data)).pages]


def issued_quote(language: str = "en") -> Quote:
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(language=language), user=None)
    return quote_issue(quote=quote)


def test_presales_downloads_the_issued_quote_pdf(client: Client) -> None:
    quote = issued_quote()
    client.force_login(quote_user())
    response = client.get(reverse("quotes:pdf", args=[quote.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert f'filename="{quote.number}.pdf"' in response["Content-Disposition"]
    text = "\n".join(pdf_pages(response.content))
    assert quote.number and quote.number in text
    assert "24 × 48 GB" in text  # seed DIMM layout
    assert "€66,910.00" in text and "€12,712.90" in text and "€79,622.90" in text
    assert "--kv-offloading-size 125" in text  # seed vLLM flag
    assert "134217728000" in text  # seed cpu_bytes_to_use
    # Margins and purchase costs are for staff only, never in the customer's PDF.
    assert "Margin" not in text and "7,100.00" not in text  # chassis cost in the CSV
    assert "Valid until" in text and "Terms" in text
    pages = pdf_pages(response.content)
    assert pages[0].count("/") >= 1 and pages[-1].rstrip().endswith(f"{len(pages)} / {len(pages)}")


def quote_user():  # type: ignore[no-untyped-def]
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username="presales")


def test_page_one_png_is_kept_as_artifact() -> None:
    if not shutil.which("pdftoppm"):
        ci_requires("pdftoppm (poppler-utils)")
    quote = issued_quote()
    ARTIFACTS.mkdir(exist_ok=True)
    pdf_path = ARTIFACTS / "quote.pdf"
    pdf_path.write_bytes(quote_pdf_render(document_from_quote(quote)))
    subprocess.run(
        [
            "pdftoppm",
            "-png",
            "-r",
            "80",
            "-f",
            "1",
            "-l",
            "1",
            "-singlefile",
            str(pdf_path),
            str(ARTIFACTS / "quote-page1"),
        ],
        check=True,
    )
    png = ARTIFACTS / "quote-page1.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_issued_quote_re_renders_identically_after_price_edits() -> None:
    quote = issued_quote()
    before = pdf_pages(quote_pdf_render(document_from_quote(quote)))
    Price.objects.filter(sku="GPU-RTX-PRO-6000-SE").update(unit_price_eur=Decimal("1.00"))
    quote.refresh_from_db()
    after = pdf_pages(quote_pdf_render(document_from_quote(quote)))
    assert after == before
    assert any("€8,900.00" in page for page in after)  # the GPU price at issue time


def test_german_pdf() -> None:
    quote = issued_quote(language="de")
    pages = pdf_pages(quote_pdf_render(document_from_quote(quote)))
    text = "\n".join(pages).replace("\xa0", " ")  # amounts keep "€" on their line
    assert f"Angebot {quote.number}" in text
    assert "66.910,00 €" in text and "79.622,90 €" in text
    assert "24 × 48 GB" in text and "Gültig bis" in text and "MwSt." in text
    # The verdict is worded in German too (seed: 296 of 500 conversations rest).
    assert "296 von 500" in " ".join(text.split())
    assert "do not fit on the GPUs" not in text


def test_fonts_are_embedded() -> None:
    data = quote_pdf_render(document_from_quote(issued_quote()))
    reader = PdfReader(io.BytesIO(data))
    fonts = reader.pages[0]["/Resources"]["/Font"]
    for ref in fonts.values():
        descriptor = ref.get_object()["/DescendantFonts"][0].get_object()["/FontDescriptor"]
        assert "/FontFile2" in descriptor or "/FontFile3" in descriptor


def test_charts_reach_weasyprint_as_the_same_svg_unless_it_is_not_xml() -> None:
    html = quote_html(document_from_quote(issued_quote()))
    charts = re.findall(r"<svg\b.*?</svg>", html, re.S)
    out = charts_as_images(html)
    images = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', out)
    assert len(charts) == 16 and "<svg" not in out  # four charts for each alternative
    assert [base64.b64decode(data).decode() for data in images] == charts
    not_xml = charts[0].replace("</text>", "&nbsp;</text>", 1)  # an HTML-only entity
    assert charts_as_images(not_xml) == not_xml


def test_bom_table_headers_repeat_on_every_page() -> None:
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    alt = quote.alternatives.get(position=0)
    for _ in range(40):  # enough lines for the table to run over a page break
        quote_line_add(alternative=alt, sku="SVC-ASSEMBLY", quantity=1)
    doc = document_from_quote(quote)
    doc["alternatives"] = doc["alternatives"][:1]
    pages = pdf_pages(quote_pdf_render(doc))
    with_rows = [p for p in pages if "SVC-ASSEMBLY" in p]
    assert len(with_rows) >= 2
    assert all("Unit price" in p for p in with_rows)


def test_verification_summary_is_shown() -> None:
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    report = VerificationReport.objects.create(
        quote=quote, status=VerificationStatus.WITHIN_TOLERANCE, summary="KV pool within 4 %"
    )
    alt = quote.alternatives.first()
    assert alt is not None
    report.checks.create(
        alternative=alt.label, name="KV pool per GPU", quantity="kv_cache_gib", unit="GiB",
        predicted=52.0, measured=50.0, deviation=0.04, tolerance=0.05,
        status=VerificationStatus.WITHIN_TOLERANCE, source="test record",
    )  # fmt: skip
    text = " ".join(" ".join(pdf_pages(quote_pdf_render(document_from_quote(quote)))).split())
    # The customer's words (verification/customer.py); the presales summary stays inside.
    assert "Within tolerance" in text and "KV pool within 4 %" not in text
    assert "lies within the tolerance of the measurements" in text
    assert "DRAFT" in text


@pytest.mark.parametrize(
    ("language", "validity"),
    # The web draft's wording (templates/pdf/quote.html; German: quotes/locale/de .po).
    [("en", "Valid until set when issued"), ("de", "Gültig bis wird bei Ausstellung gesetzt")],
)
def test_quote_pdf_command_writes_a_draft(tmp_path: Path, language: str, validity: str) -> None:
    out = tmp_path / "draft.pdf"
    call_command(
        "quote_pdf",
        "--model", "Qwen/Qwen3-32B-FP8", "--context", "8192", "--users", "500",
        "--new-conversations-per-day", "2000",
        "--customer", "Beispiel AG", "--language", language, "--out", str(out),
    )  # fmt: skip
    text = "\n".join(pdf_pages(out.read_bytes()))
    assert "Beispiel AG" in text and "24 × 48 GB" in text
    assert ("DRAFT" if language == "en" else "ENTWURF") in text
    # A draft has no validity date yet, as on the web: no "Valid until <date>".
    assert validity in " ".join(text.split())
    assert not re.search(r"(Valid until|Gültig bis) ?\d", text)
    assert not Quote.objects.exists()  # nothing stored


def test_quote_pdf_command_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "quote_pdf", "--model", "Qwen/Qwen3-32B-FP8",
         "--context", "0", "--users", "500", "--customer", "X", "--out",
         str(tmp_path / "x.pdf")],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--context" in lines[0]
    assert not (tmp_path / "x.pdf").exists()


@pytest.mark.parametrize(
    ("drafted", "issued", "expected", "foreign"),
    [
        # Labels: configurator/quotes/pricing.py and its German catalogue; item names:
        # demo_prices.csv (name, name_de); reasons: sizing/bom/lines.py (why_en, why_de).
        (
            "de",
            "en",
            ["FP8 cache, with NVMe tier", "4U GPU server", "one per socket"],
            ["mit NVMe-Stufe", "4HE-GPU-Server", "eine je Sockel"],
        ),
        (
            "en",
            "de",
            ["FP8-Cache, mit NVMe-Stufe", "4HE-GPU-Server", "eine je Sockel"],
            ["with NVMe tier", "4U GPU server", "one per socket"],
        ),
    ],
)
def test_language_changed_on_the_draft_translates_the_whole_pdf(
    client: Client, drafted: str, issued: str, expected: list[str], foreign: list[str]
) -> None:
    make_presales()
    client.force_login(quote_user())
    quote = quote_create_from_inquiry(inquiry=make_inquiry(language=drafted), user=None)
    client.post(
        reverse("quotes:settings", args=[quote.pk]),
        {"discount_percent": "0", "language": issued, "notes": ""},
    )
    client.post(reverse("quotes:issue", args=[quote.pk]))
    response = client.get(reverse("quotes:pdf", args=[quote.pk]))
    text = " ".join(" ".join(pdf_pages(response.content)).split())  # undo line wrapping
    for phrase in expected:
        assert phrase in text
    for phrase in foreign:
        assert phrase not in text


def test_totals_appear_once_after_the_last_line() -> None:
    # Issue 6 QA: the Subtotal … Total gross block repeated at each page break.
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    alt = quote.alternatives.get(position=0)
    for _ in range(40):  # enough lines for the table to run over a page break
        quote_line_add(alternative=alt, sku="SVC-ASSEMBLY", quantity=1)
    quote.discount_percent = Decimal("5.00")
    quote.save(update_fields=["discount_percent"])
    doc = document_from_quote(quote)
    doc["alternatives"] = doc["alternatives"][:1]  # one table, no comparison table
    pages = pdf_pages(quote_pdf_render(doc))
    with_rows = [n for n, p in enumerate(pages) if "SVC-ASSEMBLY" in p]
    assert len(with_rows) >= 2
    for label in ("Subtotal", "Total net", "Total gross"):
        assert sum(p.count(label) for p in pages) == 1, label
        assert label in pages[with_rows[-1]] or label in pages[with_rows[-1] + 1]


def test_chart_counts_are_the_plans_own() -> None:
    # Issue 6 QA: the chart said "204 GiB · 102 conv." where the plan says 100 on the
    # GPUs; the counts are the plan summary's placement (sizing/memory/residency.py), the same
    # the estimate's chart shows: resident on the GPUs, resting in the CPU tier.
    quote = issued_quote()
    text = " ".join(" ".join(pdf_pages(quote_pdf_render(document_from_quote(quote)))).split())
    for alt in quote.alternatives.all():
        s = alt.plan_summary
        gpu_gib = round(s["kv_cache_gib_per_gpu"] * s["gpus_per_node"])
        assert f"{gpu_gib:,} GiB · on the GPUs: {s['conversations_resident']:,}" in text
        if s["cpu_tier_total_gib"]:
            cpu_gib = round(s["cpu_tier_total_gib"])
            resting = s["conversations_in_cpu_tier"]
            assert f"{cpu_gib:,} GiB · resting in CPU memory: {resting:,}" in text


def test_a_two_node_alternative_states_nodes_total_gpus_and_memory_per_node() -> None:
    """A plan of 2 nodes × 2 GPUs is titled and described as such, not as one node.

    Workload: the seed (Qwen3-32B-FP8, 8,192 tokens) with 1,000 users on 2 RTX PRO
    6000 per node at TP 2 and at most 384 GB of host memory per node: the plan
    (``plan_create``) needs 2 nodes, 4 GPUs and 24 × 16 GB = 384 GB per node, so
    48 DIMMs and 768 GB in all (the BOM's per-node quantities × 2).
    """
    make_presales()
    inquiry = make_inquiry(
        users=1000, gpus_per_node=2, tensor_parallel_size=2, max_host_memory_gb=384
    )
    assert inquiry.plan_summary["nodes"] == 2 and inquiry.plan_summary["gpus_total"] == 4
    quote = quote_create_from_inquiry(inquiry=inquiry, user=None)
    first = quote.alternatives.order_by("position").first()
    assert (
        first is not None
        and first.label_in("en").startswith("2 nodes × 2 × NVIDIA RTX PRO 6000")
        and "(4 GPUs)" in first.label_in("en")
    )
    # quotes de django.po; the GPU's catalog name (hardware.json)
    assert first.label_in("de").startswith("2 Knoten × 2 × NVIDIA RTX PRO 6000")
    text = " ".join(" ".join(pdf_pages(quote_pdf_render(document_from_quote(quote)))).split())
    assert "2 nodes × 2 GPUs (NVIDIA RTX PRO 6000" in text and "= 4 GPUs" in text
    assert "= 384 GB per node; 2 nodes: 48 DIMMs, 768 GB in all" in text
    assert "Nodes" in text and "2 × 2 = 4" in text  # side-by-side table


@pytest.mark.parametrize(
    ("flags", "rule"),
    [
        # expert parallel: each card holds its share of the experts and, over TP, the rest
        (["--expert-parallel"], "the weights on a card (the routed experts over EP"),
        ([], "weights / TP"),
    ],
)
def test_the_pdfs_budget_rule_follows_expert_parallelism(
    tmp_path: Path, flags: list[str], rule: str
) -> None:
    out = tmp_path / "draft.pdf"
    call_command(
        "quote_pdf",
        "--model", "Qwen/Qwen3-30B-A3B", "--context", "8192", "--users", "100",
        "--gpu", "rtx-pro-6000-se", "--gpus-per-node", "4", *flags,
        "--customer", "Beispiel AG", "--language", "en", "--out", str(out),
    )  # fmt: skip
    text = " ".join(" ".join(pdf_pages(out.read_bytes())).split())
    assert rule in text
