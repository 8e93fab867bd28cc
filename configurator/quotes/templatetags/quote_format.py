"""Number and money formatting for quotes, in the active language (de or en).

Grouping and decimal marks follow the language rather than the server locale, so a
German quote reads ``1.152 GB`` and ``12.345,00 €`` and an English one ``1,152 GB`` and
``€12,345.00`` wherever it is rendered.
"""

from __future__ import annotations

from decimal import Decimal

from django import template
from django.utils import translation

from configurator.quotes.models import QuoteAlternative, QuoteLine
from sizing import catalog
from sizing.errors import SizingError

register = template.Library()


def _group(text: str, language: str) -> str:
    """Swap ``1,234.5`` to ``1.234,5`` for German."""
    if language == "de":
        return text.replace(",", "\x00").replace(".", ",").replace("\x00", ".")
    return text


@register.filter
def num(value: object, digits: int = 0) -> str:
    """``value`` with thousands grouping and ``digits`` decimals; '' for ``None``."""
    if value is None or value == "":
        return ""
    number = Decimal(str(value))
    return _group(f"{number:,.{int(digits)}f}", translation.get_language() or "en")


@register.filter
def eur(value: object) -> str:
    """An amount in EUR with two decimals: ``12.345,00 €`` (de) or ``€12,345.00`` (en)."""
    if value is None or value == "":
        return ""
    text = num(value, 2)
    if (translation.get_language() or "en") == "de":
        return f"{text}\u00a0€"
    return f"€{text}"


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
