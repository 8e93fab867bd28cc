"""``binding_label``: the name of a constraint or target the engine reports, translated;
:func:`binding_words`: what binds when nothing meets a workload, in the customer's words
(one wording for the page, the presales workspace, the CLI and the API)."""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from configurator.numbers import num
from sizing.search.cheapest import TPOT_TARGET, TTFT_TARGET

LABELS: dict[str, Promise] = {
    "GPU capacity for active users": _("GPU capacity for active users"),
    "CPU tier not larger than the GPU cache": _("CPU tier not larger than the GPU cache"),
    "NVMe endurance": _("NVMe endurance"),
    "NVMe bays per node": _("NVMe bays per node"),
    "host memory per node": _("host memory per node"),
    "one max-length conversation does not fit": _("one max-length conversation does not fit"),
    "weights do not fit at this TP": _("weights do not fit on the GPUs"),
    "tensor parallel divisibility": _("tensor parallel divisibility"),
    "GPU cooling per chassis": _("GPU cooling per chassis"),
    "GPU slots per chassis": _("GPU slots per chassis"),
    "DIMM slots per chassis": _("DIMM slots per chassis"),
    "NVMe bays per chassis": _("NVMe bays per chassis"),
    "no GPU type on the price list": _("no GPU type on the price list"),
    "TTFT p95": _("TTFT p95"),
    "TPOT": _("TPOT"),
    "no measured basis for the TTFT": _("no measured basis for the TTFT"),
}
"""The names of ``sizing.verdict.BINDING``, ``InfeasibleError.binding`` and the search's
own, by their English text."""


def binding_label(name: str) -> str:
    """``name`` in the active language (unknown names as they are)."""
    label = LABELS.get(str(name))
    return str(label) if label is not None else str(name)


def binding_words(name: str | None, *, ttft_p95_ms: float, tpot_ms: float) -> str:
    """What binds, in the active language: a latency target with its value ("the TTFT
    p95 target of 2,000 ms"), any other constraint by its :func:`binding_label`.

    Args:
        name: the binding the search reports (``sizing.search.cheapest.Recommendation.binding``).
        ttft_p95_ms, tpot_ms: the workload's targets, ms (``sizing.traffic.profile.Traffic``).
    """
    if name == TTFT_TARGET:
        return gettext("the TTFT p95 target of %(ms)s ms") % {"ms": num(ttft_p95_ms)}
    if name == TPOT_TARGET:
        return gettext("the TPOT target of %(ms)s ms") % {"ms": num(tpot_ms)}
    return binding_label(name or "")
