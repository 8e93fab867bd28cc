"""Markup of repeated small elements, joined in one step instead of a template loop.

The live estimate renders on every keystroke; a template loop costs a few microseconds
per variable it prints, which for the error slots of every field and the figures with
their steps is more than the rest of the partial. These filters build the same elements
with Python, each value escaped with :func:`html.escape` (what Django's ``escape`` filter
calls).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from html import escape

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString
from django.utils.translation import get_language, gettext

from configurator.inquiries.explain import Figure, words

register = template.Library()


_SEPARATOR = "\0"
"""Joins the figures' texts for one escape: a character escaping leaves alone."""

_ENTITIES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#x27;"))
"""What :func:`html.escape` replaces, in its order (``&`` first)."""


def escaped(text: str) -> str:
    """:func:`html.escape` of ``text``, replacing only the characters ``text`` holds:
    looking for an absent character costs a fraction of replacing it, and most texts
    of the estimate hold none."""
    for char, entity in _ENTITIES:
        if char in text:
            text = text.replace(char, entity)
    return text


def _escaped(texts: list[str]) -> list[str]:
    """Each of ``texts`` escaped as :func:`~django.utils.html.conditional_escape`
    escapes a text, in one call: escaping works character by character, so the escaped
    join splits into the escaped texts (unless a text holds the separator)."""
    parts = escaped(_SEPARATOR.join(texts)).split(_SEPARATOR)
    if len(parts) != len(texts):
        return [conditional_escape(text) for text in texts]
    return parts


def _figure(texts: list[str], detail: bool, show: str, source_label: str) -> str:
    """One figure of ``<dl class="figures">`` from its escaped ``texts`` (key, label,
    value, detail, source, then the steps), laid out as the page's template indents it."""
    key, label, value, detail_text, source, *steps = texts
    shown = f'<dd class="detail">{detail_text}</dd>' if detail else ""
    lines = "".join([f"<li>{step}</li>" for step in steps])
    return (
        f'\n          <div class="figure" id="figure-{key}">'
        f"\n            <dt>{label}</dt>"
        f'\n            <dd class="value">{value}</dd>'
        f"\n            {shown}"
        "\n            <dd>"
        '\n              <details class="calc">'
        f"\n                <summary>{show}</summary>"
        f"\n                <ol>{lines}</ol>"
        f'\n                <p class="source">{source_label} {source}</p>'
        "\n              </details>"
        "\n            </dd>"
        "\n          </div>"
        "\n          "
    )


@register.filter
def figure_items(figures: Iterable[Figure]) -> SafeString:
    """The entries of the estimate's ``<dl class="figures">``: for each figure its label,
    value, detail (when it has one) and a ``<details>`` with the calculation (one
    ``<li>`` a step) and the source. The figures' texts (plain text) are escaped with
    :func:`~django.utils.html.conditional_escape`; the two fixed phrases, translated
    here, are printed as ``{% translate %}`` prints them."""
    language = get_language()
    _ = words(language).gettext if language else gettext
    show, source_label = _("Show the calculation"), _("Source:")
    figures = list(figures)
    texts: list[str] = []
    for figure in figures:
        texts += (figure.key, figure.label, figure.value, figure.detail, figure.source)
        texts += map(str, figure.steps)
    escaped = _escaped(texts)
    items, at = [], 0
    for figure in figures:
        end = at + 5 + len(figure.steps)
        items.append(_figure(escaped[at:end], bool(figure.detail), show, source_label))
        at = end
    return SafeString("".join(items))


@lru_cache(maxsize=1024)
def _error_slot(slot_id: str, errors: str) -> str:
    """One field's ``<p>`` of :func:`oob_error_slots`; kept, as every keystroke sends the
    same ids, mostly without errors."""
    return (
        f'<p id="{escape(slot_id)}_error" class="field-error" aria-live="polite" '
        f'hx-swap-oob="true">{escape(errors)}</p>'
    )


@register.filter
def oob_error_slots(slots: Iterable[Mapping[str, str]]) -> SafeString:
    """The error slot of each field for an htmx out-of-band swap: ``slots`` as
    :meth:`~configurator.inquiries.forms.WorkloadForm.error_slots` gives them, each
    ``<p id="<id>_error" …>errors</p>`` (empty where the field has none, which clears
    an error shown before)."""
    return SafeString("".join([_error_slot(slot["id"], slot["errors"]) for slot in slots]))
