"""``chart|tier_chart:counts``: the estimate's bar of where the conversations live.

The figure the live estimate shows under its figures (:mod:`configurator.inquiries.chart`):
a bar of one ``<rect>`` per non-empty segment, titled with every count, and a legend
of the counts. Built with Python in one step, as it renders on every keystroke: the
labels are translated into the active language (once per language and label,
:class:`~configurator.inquiries.explain.words.Words`) and printed as ``{% translate %}``
prints them, the counts (numbers in the active language) escaped, the bar's
coordinates plain SVG numbers as ``unlocalize`` writes them.
"""

from __future__ import annotations

from collections.abc import Mapping

from django import template
from django.templatetags.l10n import unlocalize
from django.utils.safestring import SafeString
from django.utils.translation import get_language, gettext, gettext_noop

from configurator.inquiries.chart import Chart
from configurator.inquiries.explain.words import words
from configurator.inquiries.templatetags.markup import escaped

register = template.Library()

_LEGEND = (
    ("cpu", gettext_noop("resting in CPU memory")),
    ("nvme", gettext_noop("earlier today, on NVMe")),
    ("shared", gettext_noop("in the shared tier of all nodes")),
    ("recompute", gettext_noop("recomputed when they return")),
)
"""The legend's entries after the GPU's, each shown when its segment has conversations."""


def _svg_number(value: float) -> str:
    """``value`` as ``unlocalize`` prints it: Python's ``str`` unless that is in
    scientific notation."""
    text = str(value)
    return unlocalize(value) if "e" in text.lower() else text


@register.filter
def tier_chart(chart: Chart, counts: Mapping[str, str]) -> SafeString:
    """The ``<figure>`` of ``chart`` with ``counts`` (:func:`~configurator.inquiries.
    chart.counts_text`): the bar with its title, the legend."""
    language = get_language()
    _ = words(language).gettext if language else gettext
    count = {kind: escaped(counts[kind]) for kind in counts}
    shared = f"{_('shared tier')}: {count['shared']}, " if chart.shared else ""
    title = (
        f"{_('GPU')}: {count['gpu']}, {_('CPU memory')}: {count['cpu']}, "
        f"{_('NVMe')}: {count['nvme']}, {shared}{_('recomputed')}: {count['recompute']}"
    )
    bars = "".join(
        f'<rect class="seg seg-{escaped(kind)}" x="{_svg_number(x)}" y="0" '
        f'width="{_svg_number(width)}" height="8"></rect>'
        for kind, _count, x, width in chart.segments
    )
    legend = "".join(
        "\n    "
        + (
            f'<li><span class="key seg-{kind}"></span>{_(label)}: {count[kind]}</li>'
            if getattr(chart, kind)
            else ""
        )
        for kind, label in _LEGEND
    )
    return SafeString(
        '\n<figure class="chart">'
        f"\n  <figcaption>{_('Where the conversations live')}</figcaption>"
        '\n  <svg viewBox="0 0 100 8" preserveAspectRatio="none" width="100%" height="28" '
        'role="img" aria-labelledby="chart-title">'
        f'\n    <title id="chart-title">{title}</title>'
        f"\n    {bars}"
        "\n  </svg>"
        '\n  <ul class="legend">'
        f'\n    <li><span class="key seg-gpu"></span>{_("on the GPUs")}: {count["gpu"]}</li>'
        f"{legend}"
        "\n  </ul>"
        "\n</figure>\n"
    )
