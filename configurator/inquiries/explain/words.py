"""Numbers, phrases and the figure record the estimate's explanations share."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache

from django.utils.translation import gettext as _
from django.utils.translation import ngettext, override

from configurator.numbers import Grouping, grouping, separators


@cache
def _translated(language: str, message: str) -> str:
    with override(language):
        return _(message)


@lru_cache(maxsize=1024)
def _translated_plural(language: str, singular: str, plural: str, count: int) -> str:
    with override(language):
        return ngettext(singular, plural, count)


@dataclass(frozen=True)
class Words:
    """Numbers and fixed phrases in one language, looked up once per language.

    The estimate's figures format about ninety numbers and translate about seventy
    phrases per keystroke; asking Django for the active language each time costs more
    than the figures themselves. The phrases are the literal messages of this module,
    so the cache holds one entry per message and language.

    Attributes:
        language: a language code of ``settings.LANGUAGES``.
        decimal: its decimal separator.
        thousands: its thousands separator.
        num: ``(value, decimals=0)`` as :func:`~configurator.numbers.num` formats it in
            :attr:`language` (:func:`~configurator.numbers.grouping`).
    """

    language: str
    decimal: str
    thousands: str
    num: Grouping

    def gettext(self, message: str) -> str:
        """``message`` translated into :attr:`language` (Django's ``gettext``)."""
        return _translated(self.language, message)

    def ngettext(self, singular: str, plural: str, count: int) -> str:
        """``singular`` or ``plural`` for ``count`` in :attr:`language` (Django's
        ``ngettext``), kept for each count."""
        return _translated_plural(self.language, singular, plural, count)


@cache
def words(language: str) -> Words:
    """The :class:`Words` of ``language``."""
    decimal, thousands = separators(language)
    return Words(language, decimal, thousands, grouping(decimal, thousands))


@dataclass(frozen=True)
class Figure:
    """One figure of the estimate.

    Attributes:
        key: stable id (used for element ids and tests).
        label: what the figure is.
        value: the figure with its unit, formatted.
        detail: one short line under the value, or empty.
        steps: the calculation, one line per step, numbers filled in.
        source: where the rule comes from.
    """

    key: str
    label: str
    value: str
    detail: str
    steps: tuple[str, ...]
    source: str
