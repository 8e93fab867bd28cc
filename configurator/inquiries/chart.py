"""Where the customer's conversations live (the estimate's chart) and workload notes.

Restates :mod:`sizing.plan.orchestrator` results: conversations resident on the GPUs
(``sizing.plan.layout_choice``), resting in the CPU tier (``sizing.memory.host_memory``), on the
NVMe tier
(``sizing.memory.nvme``), in the shared tier of all nodes beyond a cut CPU tier
(``sizing.memory.residency``); the rules and sources are in those modules.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import get_language

from configurator.numbers import grouped, separators
from sizing.plan.orchestrator import Plan
from sizing.units import GIB


@dataclass(frozen=True)
class Chart:
    """Where the conversations live: counts and bar widths in percent of the total."""

    gpu: int
    cpu: int
    nvme: int
    recompute: int
    shared: int = 0

    @property
    def total(self) -> int:
        """Conversations shown in the chart."""
        return self.gpu + self.cpu + self.nvme + self.shared + self.recompute

    def share(self, part: int) -> float:
        """``part`` as a percentage of the bar (0 to 100)."""
        return round(100 * part / self.total, 2) if self.total else 0.0

    @property
    def segments(self) -> list[tuple[str, int, float, float]]:
        """``(kind, count, x_percent, width_percent)`` for every non-empty segment, in the
        quote PDF's tier order (GPU, CPU, NVMe, shared), then the recomputed ones."""
        out, x = [], 0.0
        for kind, count in (
            ("gpu", self.gpu),
            ("cpu", self.cpu),
            ("nvme", self.nvme),
            ("shared", self.shared),
            ("recompute", self.recompute),
        ):
            if count:
                width = self.share(count)
                out.append((kind, count, x, width))
                x += width
        return out


def chart(plan: Plan) -> Chart:
    """Where the users' conversations live: the plan's own counts
    (:func:`sizing.memory.residency.placement`), so the PDF and the e-mail show the same."""
    where = plan.placement
    return Chart(
        gpu=where.on_gpus,
        cpu=where.in_cpu_tier,
        nvme=where.nvme_total,
        recompute=where.recomputed,
        shared=where.in_shared_tier,
    )


def counts_text(shown: Chart) -> dict[str, str]:
    """The chart's counts formatted for the active language, by segment kind."""
    separated = separators(get_language() or "en")
    return {
        kind: grouped(getattr(shown, kind), 0, *separated)
        for kind in ("gpu", "cpu", "nvme", "shared", "recompute")
    }


def prompt_gib(plan: Plan) -> float:
    """KV of the shared system prompt, GiB (kept once per instance by prefix caching)."""
    return plan.kv_bytes_per_token * plan.request.workload.shared_prompt_tokens / GIB
