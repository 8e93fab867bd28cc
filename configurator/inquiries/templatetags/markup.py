"""Markup of repeated small elements, joined in one step instead of a template loop.

The live estimate renders on every keystroke; a template loop costs a few microseconds
per variable it prints, which for the error slots of every field and the figures with
their steps is more than the rest of the partial. These filters build the same elements
with Python, each value escaped with :func:`html.escape` (what Django's ``escape`` filter
calls).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


@register.filter
def figure_items(figures: Iterable[Figure]) -> SafeString:
    """The entries of the estimate's ``<dl class="figures">``: for each figure its label,
    value, detail (when it has one) and a ``<details>`` with the calculation (one
    ``<li>`` a step) and the source. The figures' texts are escaped with
    :func:`~django.utils.html.conditional_escape`; the two fixed phrases, translated
    here, are printed as ``{% translate %}`` prints them."""
    language = get_language()
    _ = words(language).gettext if language else gettext
    show, source_label = _("Show the calculation"), _("Source:")
    return mark_safe(
        "".join(
            _FIGURE.format(
                key=conditional_escape(figure.key),
                label=conditional_escape(figure.label),
                value=conditional_escape(figure.value),
                detail=(
                    f'<dd class="detail">{conditional_escape(figure.detail)}</dd>'
                    if figure.detail
                    else ""
                ),
                show=show,
                steps="".join(f"<li>{escape(str(line))}</li>" for line in figure.steps),
                source_label=source_label,
                source=conditional_escape(figure.source),
            )
            for figure in figures
        )
    )


@register.filter
def oob_error_slots(slots: Iterable[Mapping[str, str]]) -> SafeString:
    """The error slot of each field for an htmx out-of-band swap: ``slots`` as
    :meth:`~configurator.inquiries.forms.WorkloadForm.error_slots` gives them, each
    ``<p id="<id>_error" …>errors</p>`` (empty where the field has none, which clears
    an error shown before)."""
    return mark_safe(
        "".join(
            f'<p id="{escape(slot["id"])}_error" class="field-error" aria-live="polite" '
            f'hx-swap-oob="true">{escape(slot["errors"])}</p>'
            for slot in slots
        )
    )
