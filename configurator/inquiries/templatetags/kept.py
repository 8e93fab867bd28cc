"""Markup a process keeps for a key: what the live estimate renders again and again for
the same inputs (a chart, a sentence), rendered once and then looked up."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from threading import Lock
from typing import Any


class Kept:
    """Texts by key, at most ``size`` of them: the oldest entry goes first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._texts: dict[Hashable, str] = {}
        self._lock = Lock()

    def get(self, key: Hashable, make: Callable[[], str]) -> str:
        """The text kept for ``key``, made by ``make`` (and kept) the first time."""
        try:
            return self._texts[key]
        except KeyError:
            pass
        text = make()
        with self._lock:
            if len(self._texts) >= self.size:
                del self._texts[next(iter(self._texts))]
            self._texts[key] = text
        return text


def plain_items(values: Mapping[str, Any]) -> tuple[tuple[str, type, Any], ...] | None:
    """``values`` as a key of what they print: each name with its value's type and the
    value; ``None`` (not to be kept) unless every value is a whole number, a text or a
    float other than zero (``-0.0`` equals ``0.0`` but prints otherwise) and NaN (which
    equals nothing)."""
    items = []
    for name, value in values.items():
        kind = type(value)
        if kind is float:
            if not value or value != value:
                return None
        elif kind is not int and kind is not str:
            return None
        items.append((name, kind, value))
    return tuple(items)
