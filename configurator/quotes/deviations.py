"""Where a quote's edited lines fall short of its sizing plan, in words.

The rules are :func:`sizing.bom_check.bom_deviations`; this module plans each
alternative again from its stored inputs and words the deviations in the active
language for the editor, the issue confirmation and the PDF.
"""

from __future__ import annotations

from django.utils.formats import number_format
from django.utils.translation import gettext as _

from configurator.planning.services import plan_stored
from configurator.quotes.models import QuoteAlternative
from sizing.bom_check import Deviation, bom_deviations
from sizing.errors import SizingError
from sizing.plan import Plan


def alternative_plan(alt: QuoteAlternative) -> Plan | None:
    """The plan of ``alt``'s stored inputs, or ``None`` when they can no longer be sized
    (a model removed from the catalog)."""
    try:
        return plan_stored(alt.inputs)
    except SizingError:
        return None


def alternative_deviations(alt: QuoteAlternative, plan: Plan | None = None) -> list[Deviation]:
    """The deviations of ``alt``'s current lines from ``plan``, by default the plan of
    its inputs (:func:`alternative_plan`; pass it when it is at hand).

    An alternative without a plan (``None`` from :func:`alternative_plan`) has nothing to
    compare with and gives none.
    """
    if plan is None:
        plan = alternative_plan(alt)
    if plan is None:
        return []
    return bom_deviations(plan, [(ln.sku, ln.category, ln.quantity) for ln in alt.lines.all()])


def _n(value: int) -> str:
    return number_format(value, force_grouping=True)


def deviation_text(dev: Deviation) -> str:
    """One deviation as a sentence in the active language."""
    have, need = _n(dev.have), _n(dev.need)
    if dev.kind == "unbalanced":
        return _(
            "%(have)s DIMMs are not a multiple of the %(channels)s memory channels: "
            "the memory is unbalanced"
        ) % {"have": have, "channels": need}
    if dev.category == "dimm":
        return _("%(have)s GB of DIMMs, the plan needs %(need)s GB") % {
            "have": have,
            "need": need,
        }
    names = {
        "chassis": _("server chassis"),
        "cpu": _("CPUs"),
        "gpu": _("GPUs"),
        "nvme": _("NVMe drives"),
    }
    return _("%(have)s %(item)s, the plan needs %(need)s") % {
        "have": have,
        "item": names.get(dev.category, dev.category),
        "need": need,
    }


def alternative_deviation_texts(alt: QuoteAlternative, plan: Plan | None = None) -> list[str]:
    """:func:`alternative_deviations` of ``alt`` as sentences in the active language."""
    return [deviation_text(d) for d in alternative_deviations(alt, plan)]
