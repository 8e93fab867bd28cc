"""Check an edited bill of materials against what its plan needs.

Presales may change a quote's quantities; this module says where the edited lines fall
short of the plan, so that the editor can warn and an issued quote can state it.

Rules (each names the figure of the plan it compares with):

- Chassis: one per node (``plan.parallelism.nodes``; ``sizing.bom.lines`` sells one chassis
  per node).
- CPUs: one per socket of every node (``plan.platform.sockets`` × nodes; ``sizing.bom.lines``).
- GPUs: the request's GPUs per node × nodes (``plan.request.workload.gpus_per_node``).
- DIMMs: the host-memory planning rule's minimum per node × nodes, in GB
  (``plan.host.need_gb``, ``sizing.memory.host_memory``); the capacity of a line is its
  quantity × the size in its SKU (``DIMM-DDR5-<n>GB``, :func:`sizing.bom.lines.dimm_sku`).
  A DIMM count that is not a whole number of DIMMs on every memory channel of every
  node is unbalanced (``sizing.memory.host_memory`` fills every channel equally: 24 DIMMs on
  2 × 12 channels of an EPYC 9005 node), which lowers memory bandwidth.
- NVMe drives: the plan's drive count per node × nodes (``plan.nvme``: capacity and
  endurance decide the count), only when the plan has an NVMe tier.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sizing.plan.orchestrator import Plan

SIZED_CATEGORIES = ("chassis", "cpu", "gpu", "dimm", "nvme")
"""Line categories whose quantity the plan decides (``sizing.bom.lines.CATEGORIES``)."""

_DIMM_SKU = re.compile(r"^DIMM-[A-Z0-9]+-(\d+)GB$")


@dataclass(frozen=True)
class Deviation:
    """One way the edited lines depart from the plan.

    Attributes:
        category: the line category (one of :data:`SIZED_CATEGORIES`).
        kind: ``"short"`` (less than the plan needs) or ``"unbalanced"`` (DIMMs not
            spread evenly over the memory channels).
        have: what the lines hold: pieces, or GB for DIMMs.
        need: what the plan needs: pieces, or GB for DIMMs; for ``"unbalanced"`` the
            number of memory channels over all nodes.
        unit: ``"pcs"`` or ``"GB"`` (10^9 bytes).
    """

    category: str
    kind: str
    have: int
    need: int
    unit: str


def dimm_gb_of(sku: str) -> int | None:
    """The size in GB of one DIMM with price-list ``sku`` (``DIMM-DDR5-48GB`` → 48), or
    ``None`` when the SKU names no size."""
    match = _DIMM_SKU.match(sku)
    return int(match.group(1)) if match else None


def bom_deviations(plan: Plan, lines: Iterable[tuple[str, str, int]]) -> list[Deviation]:
    """Where ``lines`` fall short of ``plan`` (rules in the module docstring).

    Args:
        plan: the plan the lines were made from.
        lines: ``(sku, category, quantity)`` of every line over all nodes.

    Returns:
        Deviations in :data:`SIZED_CATEGORIES` order; empty when the lines cover the
        plan.
    """
    nodes = plan.parallelism.nodes
    pieces = dict.fromkeys(SIZED_CATEGORIES, 0)
    dimm_count = 0
    dimm_gb = 0
    for sku, category, quantity in lines:
        if category in pieces:
            pieces[category] += quantity
        if category == "dimm":
            dimm_count += quantity
            dimm_gb += quantity * (dimm_gb_of(sku) or 0)
    needs = {
        "chassis": nodes,
        "cpu": plan.platform.sockets * nodes,
        "gpu": plan.request.workload.gpus_per_node * nodes,
        "nvme": plan.nvme.drive_count * nodes if plan.nvme.drive is not None else 0,
    }
    out: list[Deviation] = []
    for category in SIZED_CATEGORIES:
        if category == "dimm":
            need_gb = round(plan.host.need_gb * nodes)
            if dimm_gb < need_gb:
                out.append(Deviation("dimm", "short", dimm_gb, need_gb, "GB"))
            channels = plan.platform.sockets * plan.platform.memory_channels_per_socket * nodes
            if dimm_count and dimm_count % channels:
                out.append(Deviation("dimm", "unbalanced", dimm_count, channels, "pcs"))
        elif pieces[category] < needs[category]:
            out.append(Deviation(category, "short", pieces[category], needs[category], "pcs"))
    return out
