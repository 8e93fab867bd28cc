"""What every quote document states besides its lines: the letterhead, how long its
prices hold and the VAT rate (the sizing engine's version is
:func:`configurator.version.engine_version`)."""

from __future__ import annotations

from decimal import Decimal

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
