"""The bill of materials of a plan: line items (SKU, quantity, why) for each node; no prices.

Rules (each line's reason names its input):

- Chassis, GPU cooling and the slots of a node: :mod:`sizing.hardware.chassis`.
- CPUs: one AMD EPYC 9355 (32 cores, 280 W TDP) per socket of the plan's platform (AMD
  EPYC 9005 platform facts; the seed names the 9355).
- DIMMs: the plan's DIMM layout (``sizing.memory.host_memory``): count and size per node.
- GPUs: the request's GPUs per node; the reason counts the replicas over all nodes, as
  the line's quantity counts the GPUs.
- NVLink bridges: only when a replica spans several GPUs (tensor parallel size 2 or
  more), since replicas with one GPU never talk over NVLink. H200 NVL takes 2-way or
  4-way bridges, H100 NVL, H100 PCIe and A100 PCIe 2-way bridges for pairs of cards
  (``nvlink`` entries of ``sizing/data/hardware.json``, NVIDIA product pages).
- NVMe: the plan's NVMe tier (``sizing.memory.nvme``): drive model and count.
- Boot: two M.2 drives, mirrored.
- Network: one dual-port 100 GbE adapter per node for clients and the router.
- Power: the node's peak draw (GPU board power × GPUs + CPU TDP × sockets + 400 W for
  memory, drives and fans) covered N+N by 2,700 W Titanium supplies (the 4U8G-TURIN2
  specifies 2,700 W Titanium units; a full 8-GPU node draws above 5 kW, ServeTheHome).
- Services per node: assembly, a 48-hour burn-in, shipping, a warranty extension to
  five years (the NVMe endurance horizon of ``sizing.memory.nvme.WARRANTY_YEARS``).
- Shared tier: when the plan has one, one line for the whole plan: its capacity in
  whole TB, with the network rate per node and the hashing rule in its reason
  (:mod:`sizing.bom.shared_storage`); the customer may bring it instead of buying it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.bom.shared_storage import STORAGE_SKU, storage_requirement
from sizing.hardware.chassis import (
    Chassis,
    ChassisLimitError,
    chassis_for,
    check_baseboard,
    check_chassis,
    check_gpu_cooling,
    on_baseboard,
)
from sizing.memory.nvme import WARRANTY_YEARS
from sizing.plan.orchestrator import Plan

CPU_SKU = "CPU-EPYC-9355"
CPU_TDP_W = 280
"""EPYC 9355 TDP, W (hardware facts: quattor template library, Chips and Cheese)."""
PLATFORM_OVERHEAD_W = 400
"""Memory, drives, NICs and fans of one node, W (house rule)."""
PSU_W = 2700
"""One Titanium power supply, W (ASRock Rack 4U8G-TURIN2 specification)."""

BRIDGE_WAYS = {"h200-nvl": (4, 2), "h100-nvl": (2,), "h100-pcie": (2,)}
BRIDGE_WAYS.update({"a100-pcie-40gb": (2,), "a100-pcie-80gb": (2,)})
"""Bridge sizes each PCIe card takes, largest first (``nvlink.type`` in hardware.json)."""


CATEGORIES = (
    "chassis",
    "cpu",
    "dimm",
    "gpu",
    "bridge",
    "nvme",
    "boot",
    "nic",
    "psu",
    "service",
    "storage",
)
"""Line categories in the order a BOM lists them."""


@dataclass(frozen=True)
class BomLine:
    """One line of the bill of materials.

    Attributes:
        sku: the price-list SKU.
        category: one of :data:`CATEGORIES`.
        quantity_per_node: items in each node (0 for a line of the whole plan, the
            shared tier's).
        quantity: items over all nodes of the plan.
        why_en: the reason in English, with the figure it comes from.
        why_de: the same reason in German.
    """

    sku: str
    category: str
    quantity_per_node: int
    quantity: int
    why_en: str
    why_de: str

    def why(self, language: str) -> str:
        """The reason in ``language`` (``de``; anything else gives English)."""
        return self.why_de if language == "de" else self.why_en


@dataclass(frozen=True)
class Bom:
    """The bill of materials of a plan.

    Attributes:
        nodes: nodes in the plan.
        lines: line items in :data:`CATEGORIES` order.
    """

    nodes: int
    lines: tuple[BomLine, ...]

    def line(self, category: str) -> BomLine | None:
        """The first line of ``category``, or ``None``."""
        return next((ln for ln in self.lines if ln.category == category), None)


def _de_int(value: int) -> str:
    return f"{value:,}".replace(",", ".")


def gpu_sku(slug: str) -> str:
    """The price-list SKU of the GPU with catalog ``slug``."""
    return f"GPU-{slug.upper()}"


def dimm_sku(dimm_gb: int) -> str:
    """The price-list SKU of a DDR5 RDIMM of ``dimm_gb`` GB."""
    return f"DIMM-DDR5-{dimm_gb}GB"


def nvme_sku(drive_slug: str) -> str:
    """The price-list SKU of the NVMe drive with catalog ``drive_slug``."""
    return f"NVME-{drive_slug.upper()}"


def psu_count(*, gpus: int, gpu_tdp_w: int, sockets: int) -> int:
    """Power supplies for one node, N+N redundant: ``2 × ceil(peak_w / PSU_W)``.

    Args:
        gpus: GPUs in the node.
        gpu_tdp_w: board power of one GPU, W.
        sockets: CPU sockets.

    Raises:
        ValueError: if an argument is negative.
    """
    if min(gpus, gpu_tdp_w, sockets) < 0:
        raise ValueError("gpus, gpu_tdp_w and sockets must be >= 0")
    peak_w = gpus * gpu_tdp_w + sockets * CPU_TDP_W + PLATFORM_OVERHEAD_W
    return 2 * max(1, math.ceil(peak_w / PSU_W))


def _bridges(slug: str, gpus: int, tp: int) -> tuple[str, int, int] | None:
    """(SKU, count per node, ways) of NVLink bridges, or ``None``."""
    ways_options = BRIDGE_WAYS.get(slug)
    if not ways_options or tp < 2:
        return None
    ways = next((w for w in ways_options if w <= tp and tp % w == 0), ways_options[-1])
    return f"NVLINK-BRIDGE-{ways}WAY", gpus // ways, ways


def check_node(plan: Plan) -> Chassis:
    """The chassis ``plan``'s nodes are built in, after checking that a node can be built
    and sold: the chassis takes the GPU's cooling and the node fits it.

    Args:
        plan: a sizing plan (figures per node).

    Returns:
        The :class:`~sizing.hardware.chassis.Chassis` of
        :func:`~sizing.hardware.chassis.chassis_for`.

    Raises:
        ChassisLimitError: the chassis does not take the GPU's cooling
            (:func:`check_gpu_cooling`), or the node does not fit it
            (:func:`check_node_fits`), checked in that order; rules in
            :mod:`sizing.hardware.chassis`.
    """
    check_gpu_cooling(chassis_for(plan.gpu.slug), plan.gpu)
    return check_node_fits(plan)


def check_node_fits(plan: Plan) -> Chassis:
    """The chassis ``plan``'s nodes would be built in, after checking that the node fits
    it whatever the GPU's cooling: its GPUs, DIMMs and NVMe drives within the slots and
    bays (:func:`check_chassis`) and a GPU count its baseboard comes with
    (:func:`check_baseboard`). A plan that passes is sized even for a card the chassis
    does not take (a consumer or workstation card: :func:`not_buildable_reason`).

    Raises:
        ChassisLimitError: the first limit the node exceeds.
    """
    chassis = chassis_for(plan.gpu.slug)
    check_chassis(
        chassis,
        gpus=plan.request.workload.gpus_per_node,
        dimm_count=plan.host.dimm_count,
        nvme_drive_count=plan.nvme.drive_count if plan.nvme.drive is not None else 0,
    )
    check_baseboard(plan.gpu, plan.request.workload.gpus_per_node)
    return chassis


def not_buildable_reason(plan: Plan) -> ChassisLimitError | None:
    """Why the builder does not sell ``plan``'s node although it is sized: the chassis
    does not take the GPU's cooling (:func:`check_gpu_cooling`, a consumer or workstation
    card such as the RTX 4090); ``None`` for a node the builder sells."""
    try:
        check_gpu_cooling(chassis_for(plan.gpu.slug), plan.gpu)
    except ChassisLimitError as exc:
        return exc
    return None


def _gpu_why(plan: Plan) -> tuple[str, str]:
    """The GPU line's reason in English and German: the plan's replicas over all nodes
    (the line's quantity is all nodes' GPUs), with those of one node beside them when
    there are several (pipeline parallel: the nodes one replica spans instead)."""
    p = plan.parallelism
    tp, total = p.tensor_parallel_size, p.total_replicas
    en = f"{total:,} {'replica' if total == 1 else 'replicas'} at tensor parallel size {tp}"
    de = (
        f"{_de_int(total)} {'Replikat' if total == 1 else 'Replikate'} mit Tensor-Parallelität {tp}"
    )
    if p.pipeline_parallel_size > 1:
        pp = p.pipeline_parallel_size
        return f"{en}, each over {pp} nodes", f"{de}, je über {pp} Knoten"
    if p.nodes > 1:
        return f"{en}, {p.replicas} per node", f"{de}, {p.replicas} je Knoten"
    return en, de


def bill_of_materials(plan: Plan) -> Bom:
    """The bill of materials for ``plan``'s nodes; rules in the module docstring.

    Args:
        plan: a sizing plan (figures per node; ``plan.parallelism.nodes`` nodes).

    Returns:
        A :class:`Bom` whose lines follow :data:`CATEGORIES`; NVMe and bridge lines
        appear only when the plan has an NVMe tier or tensor parallelism.

    Raises:
        ChassisLimitError: a node cannot be built (:func:`check_node`); a
            ``ValueError`` subclass.
    """
    req = plan.request
    nodes = plan.parallelism.nodes
    gpus = req.workload.gpus_per_node
    modules = on_baseboard(plan.gpu.slug)
    chassis = check_node(plan)
    lines: list[BomLine] = []

    def add(sku: str, category: str, per_node: int, en: str, de: str) -> None:
        if per_node > 0:
            lines.append(BomLine(sku, category, per_node, per_node * nodes, en, de))

    if modules:
        add(
            chassis.sku,
            "chassis",
            1,
            f"{gpus} GPU modules on a baseboard, 2 sockets",
            f"{gpus} GPU-Module auf einem Baseboard, 2 Sockel",
        )
    else:
        add(
            chassis.sku,
            "chassis",
            1,
            f"{gpus} double-width PCIe GPUs, 2 sockets, {chassis.dimm_slots} DIMM slots, "
            f"{chassis.nvme_bays} NVMe bays",
            f"{gpus} PCIe-GPUs doppelter Breite, 2 Sockel, {chassis.dimm_slots} "
            f"DIMM-Steckplätze, {chassis.nvme_bays} NVMe-Schächte",
        )
    sockets = plan.platform.sockets
    add(
        CPU_SKU,
        "cpu",
        sockets,
        f"one per socket; {plan.platform.memory_channels_per_socket} memory channels each",
        f"eine je Sockel; je {plan.platform.memory_channels_per_socket} Speicherkanäle",
    )
    host = plan.host
    buffer_note_en = (
        f"{host.buffer_gb:,.0f} GB pinned KV buffer + {host.need_gb - host.buffer_gb:,.0f} GB "
        f"reserve; {host.dimms_per_channel} DIMM per channel on {host.dimm_count} channels"
        if host.buffer_gb > 0
        else f"no CPU tier: baseline of twice the GPU memory, {host.baseline_gb:,.0f} GB"
    )
    buffer_note_de = (
        f"{_de_int(round(host.buffer_gb))} GB KV-Puffer (gepinnt) + "
        f"{_de_int(round(host.need_gb - host.buffer_gb))} GB Reserve; "
        f"{host.dimms_per_channel} DIMM je Kanal auf {host.dimm_count} Kanälen"
        if host.buffer_gb > 0
        else f"keine CPU-Stufe: doppelter GPU-Speicher, {_de_int(round(host.baseline_gb))} GB"
    )
    add(dimm_sku(host.dimm_gb), "dimm", host.dimm_count, buffer_note_en, buffer_note_de)
    tp = plan.parallelism.tensor_parallel_size
    add(gpu_sku(plan.gpu.slug), "gpu", gpus, *_gpu_why(plan))
    bridges = _bridges(plan.gpu.slug, gpus, tp)
    if bridges:
        sku, count, ways = bridges
        add(
            sku,
            "bridge",
            count,
            f"tensor parallel size {tp}: {ways} GPUs per NVLink bridge",
            f"Tensor-Parallelität {tp}: {ways} GPUs je NVLink-Brücke",
        )
    nvme = plan.nvme
    if nvme.drive is not None:
        add(
            nvme_sku(nvme.drive.slug),
            "nvme",
            nvme.drive_count,
            f"{nvme.writes_tb_per_day:.1f} TB/day written{' per node' if nodes > 1 else ''}; "
            f"rated {nvme.rated_writes_tb_per_day:.1f} TB/day ({nvme.drive.dwpd:g} DWPD)",
            f"{nvme.writes_tb_per_day:.1f} TB/Tag geschrieben{' je Knoten' if nodes > 1 else ''}; "
            f"ausgelegt für {nvme.rated_writes_tb_per_day:.1f} TB/Tag "
            f"({nvme.drive.dwpd:g} DWPD)".replace(".", ","),
        )
    add("BOOT-M2-960GB", "boot", 2, "operating system, mirrored", "Betriebssystem, gespiegelt")
    add("NIC-2X100GBE", "nic", 1, "clients and router traffic", "Clients und Router")
    gpu_tdp = plan.gpu.tdp_w or 600
    add(
        "PSU-2700W-TITANIUM",
        "psu",
        psu_count(gpus=gpus, gpu_tdp_w=gpu_tdp, sockets=sockets),
        f"peak {gpus * gpu_tdp + sockets * CPU_TDP_W + PLATFORM_OVERHEAD_W:,} W, N+N redundant",
        f"Spitze {_de_int(gpus * gpu_tdp + sockets * CPU_TDP_W + PLATFORM_OVERHEAD_W)} W, "
        "N+N redundant",
    )
    add("SVC-ASSEMBLY", "service", 1, "per node", "je Knoten")
    add("SVC-BURNIN-48H", "service", 1, "48 h under full GPU load", "48 h unter GPU-Volllast")
    add("SVC-SHIPPING-DE", "service", 1, "per node, Germany", "je Knoten, Deutschland")
    add(
        f"SVC-WARRANTY-{WARRANTY_YEARS}Y",
        "service",
        1,
        f"warranty extended to {WARRANTY_YEARS} years",
        f"Gewährleistung auf {WARRANTY_YEARS} Jahre verlängert",
    )
    storage = storage_requirement(plan.serving.shared if plan.serving else None)
    if storage is not None:
        lines.append(
            BomLine(
                STORAGE_SKU, "storage", 0, storage.quantity_tb, storage.why_en(), storage.why_de()
            )
        )
    order = {c: i for i, c in enumerate(CATEGORIES)}
    return Bom(nodes=nodes, lines=tuple(sorted(lines, key=lambda ln: order[ln.category])))
