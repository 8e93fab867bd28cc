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
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, gettext

from configurator.inquiries.explain import Figure, words

register = template.Library()


_FIGURE = (
    '\n          <div class="figure" id="figure-{key}">'
    "\n            <dt>{label}</dt>"
    '\n            <dd class="value">{value}</dd>'
    "\n            {detail}"
    "\n            <dd>"
    '\n              <details class="calc">'
    "\n                <summary>{show}</summary>"
    "\n                <ol>{steps}</ol>"
    '\n                <p class="source">{source_label} {source}</p>'
    "\n              </details>"
    "\n            </dd>"
    "\n          </div>"
    "\n          "
)
"""One figure of ``<dl class="figures">``, laid out as the page's template indents it."""


_SEPARATOR = "\0"
"""Joins the figures' texts for one escape: a character escaping leaves alone and no
text of a figure holds."""


def _escaped(texts: list[str]) -> list[str]:
    """Each of ``texts`` through :func:`~django.utils.html.conditional_escape`, escaped
    in one call: escaping works character by character, so the escaped join splits into
    the escaped texts."""
    joined = _SEPARATOR.join(texts)
    if joined.count(_SEPARATOR) != len(texts) - 1:
        return [conditional_escape(text) for text in texts]
    return conditional_escape(joined).split(_SEPARATOR)


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
        key, label, value, detail, source = escaped[at : at + 5]
        steps = escaped[at + 5 : at + 5 + len(figure.steps)]
        at += 5 + len(figure.steps)
        items.append(
            _FIGURE.format(
                key=key,
                label=label,
                value=value,
                detail=f'<dd class="detail">{detail}</dd>' if figure.detail else "",
                show=show,
                steps="".join(["<li>" + step + "</li>" for step in steps]),
                source_label=source_label,
                source=source,
            )
        )
    return mark_safe("".join(items))


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
    return mark_safe("".join([_error_slot(slot["id"], slot["errors"]) for slot in slots]))
