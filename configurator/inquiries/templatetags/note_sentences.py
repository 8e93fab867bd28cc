"""``{% note_sentence note %}``: a verdict note worded in the active language.

The sentences of the verdict's reasons and warnings (:class:`sizing.verdict.Note`, their
English in :data:`sizing.verdict.ENGLISH`) as the page, the quote PDF and the e-mails
print them; the German is in ``configurator/locale``. A sentence is translated and
filled as ``{% blocktranslate trimmed %}`` fills it: each number passes the filters of
its sentence (:data:`~configurator.inquiries.templatetags.note_messages.SENTENCES`:
``intcomma``, ``floatformat``, ``default``), then is localized and, where the template
escapes, escaped. One tag with a table of sentences instead of a chain of
``blocktranslate`` tags, one per note code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template
from django.template.base import render_value_in_context
from django.template.context import Context
from django.utils import translation
from django.utils.safestring import SafeData, SafeString, mark_safe

from configurator.inquiries.notes import NoteView
from configurator.inquiries.templatetags.note_messages import SENTENCES, Filter, Sentence

register = template.Library()


def _value(values: Mapping[str, Any], key: str, filters: tuple[Filter, ...], invalid: str) -> Any:
    """``values[key]`` through ``filters``, as the template variable ``v.key|filters``
    resolves: a missing key is the engine's ``string_if_invalid`` (an empty one still
    passes the filters); a filter marked ``is_safe`` keeps a safe input safe."""
    if key not in values:
        if invalid:
            return invalid % key if "%s" in invalid else invalid
        value: Any = invalid
    else:
        value = values[key]
    for func, args in filters:
        filtered = func(value, *args)
        value = mark_safe(filtered) if func.is_safe and isinstance(value, SafeData) else filtered  # type: ignore[attr-defined]
    return value


def _translated(sentence: Sentence, count: Any) -> str:
    """``sentence`` in the active language (its plural form for ``count``)."""
    if sentence.plural:
        return translation.ngettext(sentence.singular, sentence.plural, count)
    return translation.gettext(sentence.singular)


def _worded(note: NoteView, context: Context) -> str:
    """``note``'s sentence filled with its values (:func:`note_sentence`)."""
    sentence = SENTENCES.get(note.code)
    if sentence is None:
        return ""
    invalid = context.template.engine.string_if_invalid if context.template else ""
    values = note.values
    data = {
        name: render_value_in_context(_value(values, key, filters, invalid), context)
        for name, (key, filters) in sentence.values.items()
    }
    count = None
    name, key = sentence.count
    if name:
        count = _value(values, key, (), invalid)
        if not isinstance(count, int | float) and not hasattr(count, "as_tuple"):
            raise template.TemplateSyntaxError(f"{name!r} argument to a note must be a number.")
        data[name] = render_value_in_context(count, context)
    text = _translated(sentence, count)
    try:
        text %= data
    except (KeyError, ValueError):
        with translation.override(None):
            try:
                text = _translated(sentence, count) % data
            except (KeyError, ValueError) as exc:
                raise template.TemplateSyntaxError(
                    f"the note {note.code!r} cannot be filled with {data!r}"
                ) from exc
    return text


@register.simple_tag(takes_context=True)
def note_sentence(context: Context, note: NoteView) -> SafeString:
    """``note`` worded in the active language, its values escaped where ``context``
    escapes; empty for a code without a sentence. A translation that does not fit its
    values falls back to the English, as ``blocktranslate`` does."""
    return SafeString(_worded(note, context))
