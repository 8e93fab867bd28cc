"""``note_views``: a stored plan summary's verdict notes, ready for ``inquiries/_note.html``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template

from configurator.inquiries.notes import NoteView, from_snapshot

register = template.Library()


@register.filter
def note_views(verdict_notes: Mapping[str, Any], kind: str) -> list[NoteView]:
    """The ``kind`` (``reasons`` or ``warnings``) notes of a summary's ``verdict_notes``."""
    return from_snapshot(verdict_notes, kind)
