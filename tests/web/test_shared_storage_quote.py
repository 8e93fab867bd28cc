"""The shared tier as a quote line a customer can buy or bring: editor, PDF in both
languages and the bundle's README, for 50,000 users of the seed model.

Expected figures: the plan's own summary (its nodes; every user's 1 GiB conversation once
in the shared tier, 50,000 × 2^30 B = 53.69 TB, sold as 54 × 1 TB) and the example price
of STO-KV-SHARED-TB in configurator/catalog/data/demo_prices.csv (420.00 EUR per TB).
"""

from __future__ import annotations

import io
import zipfile
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from pypdf import PdfReader

from configurator.deployments.services import bundle_build
from configurator.planning.services import plan_stored
from configurator.quotes.document import document_from_quote
from configurator.quotes.models import Quote, QuoteLine
from configurator.quotes.pdf import quote_pdf_render
from configurator.quotes.services import quote_create_from_inquiry
from sizing.engines.shared_tier import TierOptions
from sizing.summary import plan_summary
from tests.quote_factories import make_inquiry, make_presales

pytestmark = pytest.mark.django_db

USERS = 50_000
SHARED_TIER = {"users": USERS, "max_host_memory_gb": 1152, "new_conversations_per_day": 0}
"""50,000 seed users on nodes of 24 × 48 GB and no NVMe tier: the CPU tiers hold part of
the resting conversations and the shared tier takes the returns of the rest (about a fifth,
sizing/serving/serve.py sells it from 5 %)."""


def _quote(language: str) -> Quote:
    make_presales()
    inquiry = make_inquiry(language=language, **SHARED_TIER)
    return quote_create_from_inquiry(inquiry=inquiry, user=None)


def _storage(quote: Quote) -> QuoteLine:
    return quote.alternatives.order_by("position")[0].lines.get(category="storage")


def _pdf_text(quote: Quote) -> str:
    data = quote_pdf_render(document_from_quote(quote))
    return " ".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_english_pdf_names_the_nodes_and_the_storage_line() -> None:
    quote = _quote("en")
    s = quote.alternatives.order_by("position")[0].plan_summary
    line = _storage(quote)
    assert (line.sku, line.quantity, line.unit_price_eur) == (
        "STO-KV-SHARED-TB",
        54,
        Decimal("420.00"),
    )
    text = _flat(_pdf_text(quote))
    nodes, gbps = s["nodes"], s["shared_tier_gbps"]
    assert nodes > 1 and line.alternative.lines.get(category="chassis").quantity == nodes
    assert f"{nodes} identical nodes" in text
    assert f"Shared tier (NFS/pNFS or S3): 53.7 TB, {gbps:.2f} GB/s per node" in text
    assert f"for {nodes} nodes: 53.7 TB, {gbps:.2f} GB/s per node" in text  # the line
    assert "PYTHONHASHSEED" in text and "Shared KV storage, 1 TB usable" in text
    assert "€22,680.00" in text  # 54 × 420.00 EUR


def test_german_pdf_names_the_nodes_and_the_storage_line() -> None:
    quote = _quote("de")
    s = quote.alternatives.order_by("position")[0].plan_summary
    text = _flat(_pdf_text(quote))
    nodes = s["nodes"]
    gbps = f"{s['shared_tier_gbps']:.2f}".replace(".", ",")
    assert f"{nodes} identische Knoten" in text
    # German calls a tier "Stufe" throughout (locale/de), never the English "Tier".
    assert f"Gemeinsame Stufe (NFS/pNFS oder S3): 53,7 TB, {gbps} GB/s je Knoten" in text
    assert "gemeinsame KV-Stufe (NFS/pNFS oder S3)" in text and "Tier " not in text
    assert f"für {nodes} Knoten: 53,7 TB, {gbps} GB/s je Knoten" in text
    assert "Gemeinsamer KV-Speicher, 1 TB nutzbar" in text
    assert "Shared tier" not in text and "per node" not in text


def test_presales_marks_the_storage_line_as_brought_by_the_customer(client: Client) -> None:
    quote = _quote("en")
    client.force_login(_presales())
    line = _storage(quote)
    alt = line.alternative
    before = alt.totals(discount_percent=Decimal(0), vat_rate=Decimal("0.19"))["subtotal"]
    page = client.get(reverse("quotes:detail", args=[quote.pk])).content.decode()
    assert reverse("quotes:line_provided", args=[line.pk]) in page
    response = client.post(reverse("quotes:line_provided", args=[line.pk]), {"provides": "1"})
    assert response.status_code == 302
    line.refresh_from_db()
    assert line.customer_provides and line.unit_price_eur == 0 and line.quantity == 54
    after = alt.totals(discount_percent=Decimal(0), vat_rate=Decimal("0.19"))["subtotal"]
    assert before - after == Decimal("22680.00")  # 54 × 420.00 EUR no longer charged
    text = _flat(_pdf_text(quote))
    assert "provided by the customer" in text and "53.7 TB" in text
    # Bought again: the price list's price comes back.
    client.post(reverse("quotes:line_provided", args=[line.pk]), {"provides": "0"})
    line.refresh_from_db()
    assert not line.customer_provides and line.unit_price_eur == Decimal("420.00")


def test_only_the_storage_line_can_be_provided(client: Client) -> None:
    quote = _quote("en")
    client.force_login(_presales())
    gpu = quote.alternatives.order_by("position")[0].lines.get(category="gpu")
    response = client.post(reverse("quotes:line_provided", args=[gpu.pk]), {"provides": "1"})
    assert response.status_code == 400
    storage = _storage(quote)
    response = client.post(reverse("quotes:line_provided", args=[storage.pk]), {"provides": "x"})
    assert response.status_code == 400
    gpu.refresh_from_db()
    assert not gpu.customer_provides and gpu.unit_price_eur > 0


def test_bundle_readme_states_the_storage_requirement() -> None:
    plan = plan_stored(make_inquiry(**SHARED_TIER).workload.to_json())
    s = plan_summary(plan)
    tiers = TierOptions(shared="nfs", python_hash_seed=7)
    data = bundle_build(plan=plan, engine="vllm", tiers=tiers)
    readme = zipfile.ZipFile(io.BytesIO(data)).read("README.md").decode()
    flat = _flat(readme)
    assert f"{s['nodes']} nodes, " in flat  # more than one node: the plural
    assert f"53.7 TB for {s['nodes']} nodes, {s['shared_tier_gbps']} GB/s network per node" in flat
    assert "PYTHONHASHSEED=7 and the same prefix hash algorithm" in flat


def _presales():  # type: ignore[no-untyped-def]
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username="presales")


def test_a_price_list_without_the_storage_sku_prices_it_as_brought() -> None:
    # configurator.catalog.services.bom_net_eur: the storage line without a price counts
    # as brought by the customer; any other unpriced line leaves the BOM unpriced.
    from configurator.catalog.services import bom_net_eur, prices_from_demo_file
    from sizing.bom.lines import bill_of_materials

    plan = plan_stored(make_inquiry(**SHARED_TIER).workload.to_json())
    bom = bill_of_materials(plan)
    prices = prices_from_demo_file()
    full = bom_net_eur(bom, prices)
    without = {sku: p for sku, p in prices.items() if sku != "STO-KV-SHARED-TB"}
    assert full is not None and full - bom_net_eur(bom, without) == Decimal("22680.00")
    without_nic = {sku: p for sku, p in prices.items() if sku != "NIC-2X100GBE"}
    assert bom_net_eur(bom, without_nic) is None
