"""``{% note_sentence note %}``: a verdict note worded in the active language.

The sentences of the verdict's reasons and warnings (:class:`sizing.verdict.Note`, their
English in :data:`sizing.verdict.ENGLISH`) as the page, the quote PDF and the e-mails
print them; the German is in ``configurator/locale``. A sentence is translated and
filled as ``{% blocktranslate trimmed %}`` fills it: each number passes the filters of
its sentence (:data:`~configurator.inquiries.templatetags.note_messages.SENTENCES`:
``intcomma``, ``floatformat``, ``default``), then is localized and, where the template
escapes, escaped. Worded in Python, a note costs a tenth of the template chain of
``blocktranslate`` tags it replaces, which the live estimate renders for every reason
and warning on every keystroke.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal
from functools import cache
from typing import Any

from django import template
from django.conf import settings
from django.contrib.humanize.templatetags.humanize import intcomma
from django.template.base import render_value_in_context
from django.template.context import Context as TemplateContext
from django.template.defaultfilters import floatformat
from django.utils import translation
from django.utils.formats import get_format
from django.utils.safestring import SafeData, SafeString, mark_safe

from configurator.inquiries.explain.words import words
from configurator.inquiries.notes import NoteView
from configurator.inquiries.templatetags.kept import Kept, plain_items
from configurator.inquiries.templatetags.markup import escaped
from configurator.inquiries.templatetags.note_messages import SENTENCES, Filter, Sentence
from configurator.numbers import grouped, separators

register = template.Library()


@cache
def _by_three(language: str) -> tuple[str, str] | None:
    """The decimal and thousands separators of ``language`` when its numbers group by
    three (German, English), so that ``intcomma`` of an integer is Python's grouping
    with them; ``None`` for a language that groups otherwise."""
    with translation.override(language):
        if get_format("NUMBER_GROUPING") != 3:
            return None
    return separators(language)


_GROUPED_PLACES = {"0g": 0, "1g": 1, "-1g": -1, "-2g": -2}
"""The ``floatformat`` arguments of :data:`SENTENCES` (grouped, in the active language)
and the places each asks for (negative: only for a value that is not whole)."""
_DECIMAL = Context(prec=28)


def _floatformat(value: float, places: int, by_three: tuple[str, str]) -> str:
    """``value|floatformat:"<places>g"`` for a finite float under 10**15: the float's
    shortest decimal rounded half up, grouped by three (``floatformat``'s own steps
    without its lookups of the language's formats)."""
    exact = Decimal(repr(value))
    if places <= 0 and exact == exact.to_integral_value():
        return grouped(int(exact), 0, *by_three)
    rounded = exact.quantize(Decimal(1).scaleb(-abs(places)), ROUND_HALF_UP, _DECIMAL)
    whole, _, fraction = format(abs(rounded), "f").partition(".")
    text = grouped(int(whole), 0, *by_three) + (by_three[0] + fraction if places else "")
    return "-" + text if rounded.is_signed() and rounded else text


def _value(
    values: Mapping[str, Any],
    key: str,
    filters: tuple[Filter, ...],
    invalid: str,
    by_three: tuple[str, str] | None,
) -> Any:
    """``values[key]`` through ``filters``, as the template variable ``v.key|filters``
    resolves: a missing key is the engine's ``string_if_invalid`` (an empty one still
    passes the filters); a filter marked ``is_safe`` keeps a safe input safe. An
    integer's ``intcomma`` and a float's ``floatformat`` are formatted directly where the
    language groups ``by_three`` (:func:`_floatformat`)."""
    if key not in values:
        if invalid:
            return invalid % key if "%s" in invalid else invalid
        value: Any = invalid
    else:
        value = values[key]
    for func, args in filters:
        if by_three is not None:
            if func is intcomma and type(value) is int:
                value = grouped(value, 0, *by_three)
                continue
            if (
                func is floatformat
                and type(value) is float
                and abs(value) < 1e15
                and args[0] in _GROUPED_PLACES
            ):
                value = _floatformat(value, _GROUPED_PLACES[args[0]], by_three)
                continue
        filtered = func(value, *args)
        value = mark_safe(filtered) if func.is_safe and isinstance(value, SafeData) else filtered  # type: ignore[attr-defined]
    return value


def _shown(value: Any, context: TemplateContext, decimal: str | None) -> Any:
    """``value`` as ``blocktranslate`` prints it (localized, escaped where ``context``
    escapes). A text is printed as it is; given the language's ``decimal`` separator
    (``None`` with ``USE_THOUSAND_SEPARATOR``), a whole number as Python writes it and a
    float in plain notation with that separator, as localizing gives them."""
    kind = type(value)
    if kind is str:
        return escaped(value) if context.autoescape else value
    if decimal is not None:
        if kind is int:
            return str(value)
        if kind is float:
            text = str(value)
            if "e" not in text:
                return text.replace(".", decimal)
    return render_value_in_context(value, context)


def _translated(sentence: Sentence, count: Any, language: str | None) -> str:
    """``sentence`` in the active ``language`` (its plural form for ``count``); one
    without a plural translated once per language
    (:class:`~configurator.inquiries.explain.words.Words`)."""
    if sentence.plural:
        return translation.ngettext(sentence.singular, sentence.plural, count)
    if language:
        return words(language).gettext(sentence.singular)
    return translation.gettext(sentence.singular)


@dataclass(frozen=True)
class _Wording:
    """What wording notes needs of the template and the active language, looked up once
    for all notes of a list."""

    context: TemplateContext
    invalid: str
    language: str | None
    by_three: tuple[str, str] | None
    decimal: str | None


def _wording(context: TemplateContext) -> _Wording:
    """The :class:`_Wording` of ``context`` in the active language."""
    invalid = context.template.engine.string_if_invalid if context.template else ""
    language = translation.get_language()
    by_three = _by_three(language) if language else None
    plain = language and not settings.USE_THOUSAND_SEPARATOR
    decimal = separators(language)[0] if language and plain else None
    return _Wording(context, invalid, language, by_three, decimal)


def _worded(note: NoteView, wording: _Wording) -> str:
    """``note``'s sentence filled with its values (:func:`note_sentence`)."""
    sentence = SENTENCES.get(note.code)
    if sentence is None:
        return ""
    context, invalid, by_three, decimal = (
        wording.context,
        wording.invalid,
        wording.by_three,
        wording.decimal,
    )
    values = note.values
    data = {
        name: _shown(_value(values, key, filters, invalid, by_three), context, decimal)
        for name, (key, filters) in sentence.values.items()
    }
    count = None
    name, key = sentence.count
    if name:
        count = _value(values, key, (), invalid, by_three)
        if not isinstance(count, int | float) and not hasattr(count, "as_tuple"):
            raise template.TemplateSyntaxError(f"{name!r} argument to a note must be a number.")
        data[name] = _shown(count, context, decimal)
    text = _translated(sentence, count, wording.language)
    try:
        text %= data
    except (KeyError, ValueError):
        with translation.override(None):
            try:
                text = _translated(sentence, count, None) % data
            except (KeyError, ValueError) as exc:
                raise template.TemplateSyntaxError(
                    f"the note {note.code!r} cannot be filled with {data!r}"
                ) from exc
    return text


@register.simple_tag(takes_context=True)
def note_sentence(context: TemplateContext, note: NoteView) -> SafeString:
    """``note`` worded in the active language, its values escaped where ``context``
    escapes; empty for a code without a sentence. A translation that does not fit its
    values falls back to the English, as ``blocktranslate`` does."""
    return SafeString(_worded(note, _wording(context)))


@register.simple_tag(takes_context=True)
def note_items(
    context: TemplateContext, notes: Iterable[NoteView], start: str, end: str
) -> SafeString:
    """Each of ``notes`` as :func:`note_sentence` words it, between the markup ``start``
    and ``end`` (``{% note_items reasons "<li>" "</li>" %}``), in one step for the whole
    list as the live estimate words its verdict on every keystroke."""
    wording = _wording(context)
    return SafeString("".join([f"{start}{_kept_worded(note, wording)}{end}" for note in notes]))


KEPT_SENTENCES = 2048
"""How many worded notes a process keeps (:func:`_kept_worded`)."""

_kept = Kept(KEPT_SENTENCES)


def _kept_worded(note: NoteView, wording: _Wording) -> str:
    """``note`` worded as :func:`_worded` words it, kept for its code, its values
    (:func:`~configurator.inquiries.templatetags.kept.plain_items`) and what the wording
    depends on, in a language whose numbers are formatted without Django's lookups: most
    notes of the live estimate stay the same from one keystroke to the next."""
    values = plain_items(note.values)
    if values is None or wording.by_three is None or wording.decimal is None:
        return _worded(note, wording)
    shown = (wording.context.autoescape, wording.context.use_l10n, wording.decimal)
    key = (note.code, values, wording.language, wording.invalid, wording.by_three, shown)
    return _kept.get(key, lambda: _worded(note, wording))
