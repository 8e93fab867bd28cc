"""Tick labels of the line charts (TTFT against context, the two traffic charts).

Labels are numbers in the active language (:func:`configurator.numbers.num`: ``1.024``
and ``0,5`` in German, ``1,024`` and ``0.5`` in English), as the rest of the page and
the quote print them; coordinates stay plain SVG numbers. The x-axis ticks are thinned
so that no two labels overlap: a label's width is estimated from DejaVu Sans's advance
widths (``static/fonts/DejaVuSans.ttf``, the PDF's font and wider than the page's
system fonts): 0.636 em a digit, 0.318 em a separator or a space; any other character
is counted as a full em.
"""

from __future__ import annotations

from collections.abc import Sequence

from configurator.numbers import num

FONT_SIZE = 11.0
"""Font size of the tick labels in SVG units (``_ttft_chart.svg``, ``_traffic_chart.svg``)."""
GAP_EM = 0.8
"""Space kept between two neighbouring x-axis labels, em (a little more than two spaces)."""
_NARROW = frozenset(".,  \u00a0\u202f")
_EM_PER_CHAR = {**dict.fromkeys("0123456789", 0.636), **dict.fromkeys(_NARROW, 0.318)}


def label(value: float) -> str:
    """``value`` with as many places as it has (up to three), grouped by three, in the
    active language: ``16384`` → ``16.384`` (de), ``0.5`` → ``0,5`` (de)."""
    places = next((p for p in range(4) if abs(value - round(value, p)) < 1e-9), 3)
    return num(round(value) if places == 0 else value, places)


def label_width(text: str, font_size: float = FONT_SIZE) -> float:
    """Estimated width of ``text`` in SVG units at ``font_size`` (see the module's note)."""
    return font_size * sum(_EM_PER_CHAR.get(ch, 1.0) for ch in text)


def thinned(ticks: Sequence[dict[str, str]], font_size: float = FONT_SIZE) -> list[dict[str, str]]:
    """The x-axis ``ticks`` (``pos`` as an SVG number, ``label`` centred on it, left to
    right) whose labels keep :data:`GAP_EM` apart: the first and the last are kept, and
    from the left each one that clears the last kept; a tick that crowds the last is
    dropped."""
    if len(ticks) < 3:
        return list(ticks)
    gap = GAP_EM * font_size

    def edges(tick: dict[str, str]) -> tuple[float, float]:
        half = label_width(tick["label"], font_size) / 2
        return float(tick["pos"]) - half, float(tick["pos"]) + half

    kept = [ticks[0]]
    for tick in ticks[1:-1]:
        if edges(tick)[0] >= edges(kept[-1])[1] + gap:
            kept.append(tick)
    while len(kept) > 1 and edges(ticks[-1])[0] < edges(kept[-1])[1] + gap:
        kept.pop()
    return [*kept, ticks[-1]]
