"""The price list: the bundled example prices, prices by date, CSV import and export."""

from __future__ import annotations

import csv
import datetime as dt
import io
from decimal import Decimal
from pathlib import Path

import pytest
import tablib
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from configurator.catalog.admin import PriceResource
from configurator.catalog.models import Price
from configurator.catalog.services import DEMO_PRICES_CSV, pricelist_load_demo, prices_on
from sizing.bom.lines import dimm_sku, gpu_sku, nvme_sku
from sizing.hardware import catalog

pytestmark = pytest.mark.django_db


def _file_skus() -> set[str]:
    with DEMO_PRICES_CSV.open(encoding="utf-8") as fh:
        return {row["sku"] for row in csv.DictReader(fh)}


def test_demo_load_is_idempotent_and_marked_as_examples() -> None:
    first = pricelist_load_demo()
    second = pricelist_load_demo()
    assert first == second == len(_file_skus())  # one SKU per row of demo_prices.csv
    assert Price.objects.count() == first
    assert not Price.objects.filter(is_example=False).exists()


def test_every_item_the_bom_can_contain_has_a_demo_price() -> None:
    # Issue 6 item 2: a SKU for every BOM item. The SKU builders of sizing/bom/lines.py over
    # the hardware catalog (sizing/data/hardware.json) give every possible line.
    skus = _file_skus()
    needed = {gpu_sku(slug) for slug in catalog.gpus()}
    needed |= {dimm_sku(gb) for gb in catalog.dimm_sizes_gb()}
    needed |= {nvme_sku(d.slug) for d in catalog.nvme_drives()}
    needed |= {
        "CHS-SP5-4U8G",
        "CHS-SP5-HGX8",
        "CPU-EPYC-9355",
        "NVLINK-BRIDGE-2WAY",
        "NVLINK-BRIDGE-4WAY",
        "BOOT-M2-960GB",
        "NIC-2X100GBE",
        "PSU-2700W-TITANIUM",
        "SVC-ASSEMBLY",
        "SVC-BURNIN-48H",
        "SVC-SHIPPING-DE",
        "SVC-WARRANTY-5Y",
    }
    assert needed - skus == set()


def test_price_in_force_is_the_latest_valid_from_not_after_the_day() -> None:
    pricelist_load_demo()
    # demo_prices.csv: DIMM-DDR5-48GB at 245.00 EUR from 2026-01-01.
    Price.objects.create(
        sku="DIMM-DDR5-48GB",
        name="48 GB DDR5-6400 ECC RDIMM",
        category="dimm",
        unit_price_eur=Decimal("260.00"),
        valid_from=dt.date(2026, 7, 1),
    )
    assert prices_on(dt.date(2026, 6, 30))["DIMM-DDR5-48GB"].unit_price_eur == Decimal("245.00")
    assert prices_on(dt.date(2026, 7, 1))["DIMM-DDR5-48GB"].unit_price_eur == Decimal("260.00")
    assert "DIMM-DDR5-48GB" not in prices_on(dt.date(2025, 12, 31))


def test_csv_export_then_import_round_trips() -> None:
    pricelist_load_demo()
    exported = PriceResource().export().csv
    header = exported.splitlines()[0].split(",")
    assert header[:3] == ["sku", "name", "name_de"]
    rows = list(csv.DictReader(io.StringIO(exported)))
    for row in rows:
        if row["sku"] == "DIMM-DDR5-48GB":
            row["unit_price_eur"] = "251.50"
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header)
    writer.writeheader()
    writer.writerows(rows)
    result = PriceResource().import_data(tablib.Dataset().load(out.getvalue(), format="csv"))
    assert not result.has_errors() and not result.has_validation_errors()
    assert Price.objects.count() == len(_file_skus())  # matched on SKU + valid-from
    assert Price.objects.get(sku="DIMM-DDR5-48GB").unit_price_eur == Decimal("251.50")


def test_admin_import_and_export_pages_need_staff(client: Client) -> None:
    url = reverse("admin:catalog_price_export")
    assert client.get(url).status_code == 302  # to the admin login
    admin = get_user_model().objects.create_superuser("boss", "boss@example.com", "pw")
    client.force_login(admin)
    assert client.get(reverse("admin:catalog_price_import")).status_code == 200
    assert client.get(url).status_code == 200


def test_malformed_price_file_names_the_line_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "prices.csv"
    bad.write_text(
        "sku,name,name_de,category,unit_price_eur,unit_cost_eur,valid_from,is_example\n"
        "A,a,a,cpu,10.00,5.00,2026-01-01,1\n"
        "B,b,b,cpu,ten,5.00,2026-01-01,1\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"prices\.csv line 3"):
        pricelist_load_demo(path=bad)
    assert Price.objects.count() == 0
