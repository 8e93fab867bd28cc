"""The verdict's reasons and warnings, ready to be worded in the reader's language.

:mod:`sizing.verdict` gives each reason and warning as a :class:`~sizing.verdict.Note`:
a code with its numbers. The sentences themselves are in
:mod:`configurator.inquiries.templatetags.note_messages`, worded by
:mod:`configurator.inquiries.templatetags.note_sentences` (``{% note_sentence note %}``,
which ``inquiries/_note.html`` prints; German and English in ``configurator/locale``),
which formats the numbers for the active language. An
inquiry keeps the notes in its plan snapshot (:func:`snapshot`) so that its emails can
word them later in the customer's language.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from sizing.serving.benefit import ttft_comparison
from sizing.verdict import Note, Verdict

FIXES: dict[str, Promise] = {
    "More GPUs or a shorter context": _("More GPUs or a shorter context"),
    "More GPUs, an FP8 KV cache or a shorter context": _(
        "More GPUs, an FP8 KV cache or a shorter context"
    ),
}
"""The fixes ``sizing.verdict.decide`` names in an ``active`` note, by their English text."""


@dataclass(frozen=True)
class NoteView:
    """One note for a template: ``code`` picks the sentence, ``values`` fill it in.

    Attributes:
        code: a key of :data:`sizing.verdict.ENGLISH`.
        values: the note's numbers by name; ``fixes`` is translated.
    """

    code: str
    values: Mapping[str, Any]


def view(code: str, values: Mapping[str, Any]) -> NoteView:
    """A :class:`NoteView` for ``code`` with ``values``; a known ``fixes`` text translated,
    and a ``tier_hits`` note stored with its TTFTs in seconds (``ttft_s``,
    ``ttft_no_tier_s``) given the values of :func:`sizing.serving.benefit.ttft_comparison`."""
    shown = dict(values)
    if "fixes" in shown:
        shown["fixes"] = FIXES.get(str(shown["fixes"]), shown["fixes"])
    if code == "tier_hits" and "ttft_ms" not in shown and "ttft_no_tier_s" in shown:
        # A snapshot stored before the comparison was quoted in ms: its seconds, in ms.
        ms = (1000 * float(shown["ttft_s"]), 1000 * float(shown["ttft_no_tier_s"]))
        shown.update(ttft_comparison(*ms))
    if "months" in shown:
        # The plural of "month" follows the whole number the sentence shows.
        shown["months_whole"] = math.floor(float(shown["months"]) + 0.5)
    return NoteView(code=code, values=shown)


def views(notes: Iterable[Note]) -> list[NoteView]:
    """The notes of a verdict (``reason_notes`` or ``warning_notes``) for a template."""
    return [view(note.code, dict(note.values)) for note in notes]


def snapshot(verdict: Verdict) -> dict[str, list[dict[str, Any]]]:
    """The verdict's notes as JSON-ready data: ``{"reasons": [...], "warnings": [...]}``.

    Each entry is ``{"code": str, "values": {name: number or text}}``.
    """
    return {
        "reasons": [{"code": n.code, "values": dict(n.values)} for n in verdict.reason_notes],
        "warnings": [{"code": n.code, "values": dict(n.values)} for n in verdict.warning_notes],
    }


def from_snapshot(data: Mapping[str, Any], kind: str) -> list[NoteView]:
    """The ``kind`` (``"reasons"`` or ``"warnings"``) notes of a :func:`snapshot`.

    An older snapshot without notes gives an empty list.
    """
    return [view(str(entry["code"]), entry.get("values", {})) for entry in data.get(kind, [])]
