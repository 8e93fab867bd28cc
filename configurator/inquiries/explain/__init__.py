"""The estimate as the customer reads it: each figure with its calculation and source.

This module does not size anything; it restates what :mod:`sizing.plan.orchestrator` computed, with
the customer's numbers filled into the formula of each rule, formatted for the active
language (``1.152 GB`` in German, ``1,152 GB`` in English). The rules and their sources
live in the ``sizing`` modules named in each :class:`Figure`.
"""

from __future__ import annotations

from django.utils.translation import get_language

from configurator.inquiries.explain.gpus import gpu_figure
from configurator.inquiries.explain.memory import (
    cpu_figure,
    host_figure,
    kv_figure,
    nodes_figure,
    nvme_figure,
    resident_figure,
)
from configurator.inquiries.explain.ttft import transfer_figure
from configurator.inquiries.explain.words import Figure, Words, words
from sizing.plan.orchestrator import Plan

__all__ = ["Figure", "Words", "figures", "words"]


def figures(plan: Plan) -> list[Figure]:
    """Every figure of the estimate, in reading order, in the active language."""
    w = words(get_language() or "en")
    out = [
        kv_figure(plan, w),
        gpu_figure(plan, w),
        nodes_figure(plan, w),
        resident_figure(plan, w),
        cpu_figure(plan, w),
        host_figure(plan, w),
        nvme_figure(plan, w),
        transfer_figure(plan, w),
    ]
    return [f for f in out if f is not None]
