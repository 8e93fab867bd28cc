"""What every quote document states besides its lines: the letterhead, how long its
prices hold, the VAT rate and the sizing engine's version."""

from __future__ import annotations

import tomllib
from decimal import Decimal
from functools import cache
from pathlib import Path

from django.conf import settings

SELLER = {
    "name": "Example Server Builder GmbH",
    "address": "Musterstraße 1, 80331 München",
    "contact": "presales@example.com · +49 89 000000",
}
"""The letterhead; an example company (override with ``settings.QUOTE_SELLER``)."""


VALIDITY_DAYS = 30
"""Days an issued quote's prices hold."""


def vat_rate() -> Decimal:
    """The VAT rate from ``settings.VAT_RATE`` (0.19, German standard rate, §12 UStG)."""
    return Decimal(str(settings.VAT_RATE))


@cache
def engine_version() -> str:
    """The sizing engine's version: the project version in ``pyproject.toml``."""
    pyproject = Path(settings.BASE_DIR) / "pyproject.toml"
    version = tomllib.loads(pyproject.read_text("utf-8"))["project"]["version"]
    return f"sizing {version}"
