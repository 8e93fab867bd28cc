"""Template filters for quotes: numbers and money in the active language (de or en,
:mod:`configurator.numbers`), catalog GPU names, titles and reasons by language.

A German quote reads ``1.152 GB`` and ``12.345,00 €`` and an English one ``1,152 GB``
and ``€12,345.00`` wherever it is rendered.
"""

from __future__ import annotations

from decimal import Decimal

from django import template

from configurator import numbers
from configurator.quotes.models import QuoteAlternative, QuoteLine
from sizing.errors import SizingError
from sizing.hardware import catalog
from sizing.units import whole_gib

register = template.Library()


@register.filter
def num(value: object, digits: int = 0) -> str:
    """``value`` with thousands grouping and ``digits`` decimals
    (:func:`configurator.numbers.num`, read as a decimal); '' for ``None``."""
    if value is None or value == "":
        return ""
    return numbers.num(Decimal(str(value)), int(digits))


@register.filter
def gib(value: object) -> str:
    """A CPU tier in GiB as the customer reads it: whole GiB rounded down
    (:func:`sizing.units.whole_gib`), grouped like :func:`num`; '' for ``None``."""
    if value is None or value == "":
        return ""
    return numbers.num(Decimal(whole_gib(float(str(value)))), 0)


@register.filter
def eur(value: object) -> str:
    """An amount in EUR (:func:`configurator.numbers.eur`)."""
    return numbers.eur(None if value is None else str(value))


@register.filter
def gpu_name(slug: object) -> str:
    """The catalog name of the GPU ``slug`` (``sizing/data/hardware.json``); the slug itself
    when the catalog does not know it."""
    try:
        return catalog.gpu(str(slug)).name
    except SizingError:
        return str(slug)


@register.filter
def label_in(alternative: QuoteAlternative, language: str) -> str:
    """An alternative's title in the quote's ``language``."""
    return alternative.label_in(language)


@register.filter
def description_in(line: QuoteLine, language: str) -> str:
    """A quote line's item name in the quote's ``language``."""
    return line.description_in(language)


@register.filter
def why_in(line: QuoteLine, language: str) -> str:
    """A quote line's reason in the quote's ``language``."""
    return line.why_in(language)


@register.filter
def times(value: object, factor: object) -> int | float:
    """``value × factor`` for per-node figures shown for all nodes (0 if not numbers)."""
    try:
        product = float(value) * float(factor)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0
    return int(product) if product.is_integer() else product
