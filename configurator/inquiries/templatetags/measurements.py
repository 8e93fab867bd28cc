"""``measured_titles``: the measurement ids of a plan summary as readable descriptions."""

from __future__ import annotations

from collections.abc import Iterable

from django import template

from configurator.inquiries.measurements import titles

register = template.Library()


@register.filter
def measured_titles(ids: Iterable[str] | None) -> str:
    """``ids`` described in the active language, joined by semicolons."""
    return "; ".join(titles(ids or ()))
