"""Numbers and money as pages, PDFs and e-mails print them, in the active language.

Django's own ``number_format``, ``localize`` and the ``intcomma``/``floatformat``
filters serve wherever a value is formatted once; this module holds what they do not:

- :func:`num`: the same grouping at a fraction of the cost (the live estimate formats
  about ninety numbers per keystroke);
- :func:`eur`: an amount in euros with the sign where each language writes it
  (``12.345,00 €`` in German, ``€12,345.00`` in English).

Separators are Django's locale formats of the language (``1.152`` in German, ``1,152``
in English), never the server's locale.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from functools import cache, lru_cache, partial

from django.utils.formats import get_format
from django.utils.translation import get_language, override


@cache
def separators(language: str) -> tuple[str, str]:
    """The decimal and thousands separators of ``language`` (Django's locale formats)."""
    with override(language):
        return str(get_format("DECIMAL_SEPARATOR")), str(get_format("THOUSAND_SEPARATOR"))


Grouping = Callable[..., str]
"""``(value, decimals=0) -> str``: :func:`grouped` with a language's separators."""


@cache
def grouping(decimal: str, thousands: str) -> Grouping:
    """:func:`grouped` with ``decimal`` and ``thousands`` as separators, as one function
    of ``(value, decimals=0)``.

    The live estimate formats the same numbers again and again (a model's layers, the
    GPU's memory, the replicas in several figures): the text of a non-zero ``int`` or
    ``float`` is kept for its type and value (:func:`functools.lru_cache`); a zero's is
    not, as equal zeros differ in sign (``-0.0 == 0.0``)."""
    kept = lru_cache(maxsize=4096, typed=True)(
        partial(_grouped, decimal=decimal, thousands=thousands)
    )

    def formatted(value: float | Decimal, decimals: int = 0) -> str:
        if value and type(value) in _KEPT_TYPES:
            return kept(value, decimals)
        return _grouped(value, decimals, decimal, thousands)

    return formatted


def grouped(value: float | Decimal, decimals: int, decimal: str, thousands: str) -> str:
    """``value`` rounded to ``decimals`` places (Python's rounding of its type), grouped
    by three with ``thousands`` and ``decimal`` as separators; an integer without
    places exactly (not through a float)."""
    return grouping(decimal, thousands)(value, decimals)


def _grouped(value: float | Decimal, decimals: int, decimal: str, thousands: str) -> str:
    exact = isinstance(value, int) and not decimals
    text = f"{value:,}" if exact else f"{value:,.{decimals}f}"
    return text.replace(",", "\0").replace(".", decimal).replace("\0", thousands)


_KEPT_TYPES = frozenset((int, float))


def num(value: float | Decimal, decimals: int = 0) -> str:
    """``value`` with ``decimals`` places and thousands grouping in the active language.

    Same result as ``django.utils.formats.number_format(..., force_grouping=True)`` for
    languages that group by three (German, English).
    """
    return grouped(value, decimals, *separators(get_language() or "en"))


def eur(value: float | Decimal | str | None) -> str:
    """An amount in EUR with two decimals: ``12.345,00 €`` (de) or ``€12,345.00`` (en);
    ``""`` for ``None`` or ``""``. The amount is read as a decimal (``str`` first), so
    ``0.125`` rounds half to even as the quote's totals do."""
    if value is None or value == "":
        return ""
    text = num(Decimal(str(value)), 2)
    if (get_language() or "en") == "de":
        return f"{text}\u00a0€"
    return f"€{text}"
