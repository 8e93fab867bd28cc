"""Where a quote's edited lines fall short of its sizing plan, in words.

The rules are :func:`sizing.bom.check.bom_deviations`; this module plans each
alternative again from its stored inputs and words the deviations in the active
language for the editor, the issue confirmation and the PDF.
"""

from __future__ import annotations

from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import npgettext

from configurator.planning.services import plan_stored
from configurator.quotes.models import QuoteAlternative
from sizing.bom.check import Deviation, bom_deviations
from sizing.errors import SizingError
from sizing.plan.orchestrator import Plan


def alternative_plan(alt: QuoteAlternative) -> Plan | None:
    """The plan of ``alt``'s stored inputs, or ``None`` when they can no longer be sized
    (a model removed from the catalog)."""
    try:
        return plan_stored(alt.inputs)
    except SizingError:
        return None


def plan_deviations(alt: QuoteAlternative, plan: Plan | None) -> list[Deviation]:
    """The deviations of ``alt``'s current lines from ``plan``, the plan of its inputs
    (:func:`alternative_plan`). An alternative without a plan (``None``) has nothing to
    compare with and gives none."""
    if plan is None:
        return []
    return bom_deviations(plan, [(ln.sku, ln.category, ln.quantity) for ln in alt.lines.all()])


def alternative_deviations(alt: QuoteAlternative) -> list[Deviation]:
    """:func:`plan_deviations` of ``alt`` from the plan of its inputs."""
    return plan_deviations(alt, alternative_plan(alt))


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
    count = dev.have  # "1 CPU", "2 CPUs": the item agrees with what the quote has
    names = {
        "chassis": npgettext("quoted item", "server chassis", "server chassis", count),
        "cpu": npgettext("quoted item", "CPU", "CPUs", count),
        "gpu": npgettext("quoted item", "GPU", "GPUs", count),
        "nvme": npgettext("quoted item", "NVMe drive", "NVMe drives", count),
    }
    return _("%(have)s %(item)s, the plan needs %(need)s") % {
        "have": have,
        "item": names.get(dev.category, dev.category),
        "need": need,
    }


def deviation_texts(deviations: list[Deviation]) -> list[str]:
    """``deviations`` as sentences in the active language (:func:`deviation_text`)."""
    return [deviation_text(d) for d in deviations]


def alternative_deviation_texts(alt: QuoteAlternative) -> list[str]:
    """:func:`alternative_deviations` of ``alt`` as sentences in the active language."""
    return deviation_texts(alternative_deviations(alt))
