"""Price-list workflows: the bundled demo price list and price look-ups for a date."""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from django.db import DatabaseError, transaction

from configurator.catalog.models import Price, PublicPricing
from configurator.dbcheck import missing_database_file
from sizing.bom.lines import Bom, gpu_sku
from sizing.hardware import catalog

CENT = Decimal("0.01")
DEMO_PRICES_CSV = Path(__file__).resolve().parent / "data" / "demo_prices.csv"


def _read_prices(path: Path) -> list[Price]:
    """Unsaved price rows from a price-list CSV (columns in ``data/README.md``).

    Raises:
        ValueError: a row with a missing column or a malformed number or date.
    """
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for n, row in enumerate(rows, start=2):
        try:
            out.append(
                Price(
                    sku=row["sku"],
                    name=row["name"],
                    name_de=row["name_de"],
                    category=row["category"],
                    unit_price_eur=Decimal(row["unit_price_eur"]),
                    unit_cost_eur=Decimal(row["unit_cost_eur"]),
                    valid_from=dt.date.fromisoformat(row["valid_from"]),
                    is_example=row["is_example"].strip() in ("1", "true", "True"),
                )
            )
        except (KeyError, AttributeError, ArithmeticError, ValueError) as exc:
            raise ValueError(f"{path.name} line {n}: {exc!r}") from exc
    return out


def pricelist_load_demo(*, path: Path = DEMO_PRICES_CSV) -> int:
    """Load the bundled example price list; returns the number of SKUs in the file.

    Rows are keyed by (SKU, valid-from): a second run updates them in place and adds
    nothing; rows presales entered for other dates are left alone. Every row is marked
    as an example.

    Raises:
        ValueError: a malformed row (nothing is written then).
    """
    rows = _read_prices(path)
    with transaction.atomic():
        for row in rows:
            Price.objects.update_or_create(
                sku=row.sku,
                valid_from=row.valid_from,
                defaults={
                    "name": row.name,
                    "name_de": row.name_de,
                    "category": row.category,
                    "unit_price_eur": row.unit_price_eur,
                    "unit_cost_eur": row.unit_cost_eur,
                    "is_example": True,
                },
            )
    return len({row.sku for row in rows})


def prices_on(day: dt.date) -> dict[str, Price]:
    """The price in force on ``day`` for each SKU (latest ``valid_from`` not after it).

    Empty when the price list is empty or the database is not set up (a database file
    that does not exist is not created).
    """
    if missing_database_file():
        return {}
    try:
        return Price.objects.current_by_sku(day)
    except DatabaseError:
        return {}


def prices_from_demo_file(day: dt.date | None = None) -> dict[str, Price]:
    """The bundled example prices by SKU, unsaved (for drafts without a database)."""
    out: dict[str, Price] = {}
    for row in sorted(_read_prices(DEMO_PRICES_CSV), key=lambda r: r.valid_from, reverse=True):
        if day is None or row.valid_from <= day:
            out.setdefault(row.sku, row)
    return out


def bom_net_eur(bom: Bom, prices: Mapping[str, Price]) -> Decimal | None:
    """The net list price of ``bom`` in EUR, as a quote totals it, or ``None``.

    Each line is ``quantity × unit price`` rounded to cents half up, then summed: the
    subtotal of :func:`configurator.quotes.models.compute_totals` before a discount.
    ``None`` when a line's SKU has no price in ``prices``, except the shared tier's
    storage line: without a price it counts as brought by the customer (0.00 EUR), as a
    quote may mark it (``sizing.bom.shared_storage``).
    """
    total = Decimal("0.00")
    for line in bom.lines:
        price = prices.get(line.sku)
        if price is None and line.category == "storage":
            continue
        if price is None:
            return None
        total += (Decimal(line.quantity) * price.unit_price_eur).quantize(
            CENT, rounding=ROUND_HALF_UP
        )
    return total


def priced_gpu_slugs(prices: Mapping[str, Price]) -> list[str]:
    """Catalog GPUs whose SKU has a price in ``prices``, in catalog order."""
    return [slug for slug in catalog.gpus() if gpu_sku(slug) in prices]


def public_pricing() -> PublicPricing:
    """The public-page price policy (the default, no prices, without a database)."""
    try:
        return PublicPricing.current()
    except DatabaseError:
        return PublicPricing(pk=1)
