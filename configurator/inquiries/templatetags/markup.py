"""Markup of repeated small elements, joined in one step instead of a template loop.

The live estimate renders on every keystroke; a template loop costs a few microseconds
per variable it prints, which for the error slots of every field and the steps of every
figure is more than the rest of the partial. These filters build the same elements with
Python, each value escaped with :func:`html.escape` (what Django's ``escape`` filter
calls).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape

from django import template
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


@register.filter
def list_items(lines: Iterable[str]) -> SafeString:
    """``<li>line</li>`` for each of ``lines``, escaped."""
    return mark_safe("".join(f"<li>{escape(str(line))}</li>" for line in lines))


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
