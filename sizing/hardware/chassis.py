"""The server chassis a node is built in, and the slots that limit a node.

Rules:

- Chassis: one dual-socket SP5 server per node with eight double-width PCIe Gen5 x16
  slots, 24 DIMM slots at one DIMM per channel and 4 NVMe bays (ASRock Rack
  4U8G-TURIN2, ServeTheHome review; ASUS ESC8000A-E13P; hardware notes "pattern for
  8-GPU PCIe nodes"). SXM and OAM modules sit on a vendor baseboard, so those GPUs get
  the HGX/UBB chassis instead: 8 modules, 24 DIMM slots (MLPerf OAM reference nodes:
  24 DIMMs) and 8 NVMe bays (upper end of the 2-8 front bays of the hardware notes'
  8-GPU pattern). The chosen chassis must hold the plan's GPUs, DIMMs and NVMe drives;
  otherwise the BOM raises :class:`ChassisLimitError` naming the constraint.
- GPU cooling: a chassis takes only the cooling kinds listed for it in hardware.json
  (``chassis[].takes_cooling`` against each GPU's ``cooling``): the 4U PCIe server takes
  passive server cards and blower cards, whose air leaves front to back with the chassis
  fans (NVIDIA RTX PRO 6000 Server Edition and Max-Q Workstation Edition pages); it does
  not take the 600 W flow-through Workstation Edition (NVIDIA's datasheet: a desktop
  cooler) or open-air consumer cards. The baseboard chassis takes SXM/OAM modules only.
- GPUs per baseboard: a module GPU comes only in the counts its baseboard is built for
  (``baseboard_gpus`` in hardware.json with ``baseboard_gpus_source``: HGX H100/H200/A100
  4 or 8, HGX H20 and B200/B300 8, AMD UBB 8), so a node of two H100 SXM cannot be
  bought; the BOM raises :class:`ChassisLimitError` for another count.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.errors import Fix, InfeasibleError, gettext_noop
from sizing.hardware import catalog
from sizing.hardware.catalog import Gpu

MODULE_COOLING = "module"
"""The ``cooling`` of a GPU sold as an SXM/OAM module on a baseboard (hardware.json)."""


def on_baseboard(slug: str) -> bool:
    """Whether GPU ``slug`` is an SXM/OAM module on a baseboard (its ``cooling`` in
    hardware.json is ``module``); ``False`` for a slug the catalog does not know."""
    gpu = catalog.gpus().get(slug)
    return gpu is not None and gpu.cooling == MODULE_COOLING


def baseboard_takes(gpu: Gpu, gpus: int) -> bool:
    """Whether ``gpus`` modules of ``gpu`` come on one of its baseboards (always for a
    PCIe card, whose ``baseboard_gpus`` is empty; module docstring)."""
    return not gpu.baseboard_gpus or gpus in gpu.baseboard_gpus


@dataclass(frozen=True)
class Chassis:
    """A server chassis the BOM can sell, with the slots that limit a node.

    Attributes:
        sku: the price-list SKU.
        gpu_slots: GPUs it takes (double-width PCIe cards or baseboard modules).
        dimm_slots: DIMM slots over both sockets.
        nvme_bays: front NVMe drive bays.
        source: where the figures come from.
    """

    sku: str
    gpu_slots: int
    dimm_slots: int
    nvme_bays: int
    source: str

    @property
    def takes_cooling(self) -> frozenset[str]:
        """The GPU cooling kinds this chassis holds (``chassis`` in hardware.json)."""
        return catalog.chassis_cooling().get(self.sku, frozenset())

    def takes(self, gpu: Gpu) -> bool:
        """Whether ``gpu``'s cooling (``Gpu.cooling``) is one this chassis holds."""
        return gpu.cooling in self.takes_cooling


PCIE_CHASSIS = Chassis(
    sku="CHS-SP5-4U8G",
    gpu_slots=8,
    dimm_slots=24,
    nvme_bays=4,
    source="ASRock Rack 4U8G-TURIN2 (ServeTheHome review): 8 x16 slots, 24 DIMMs, 4 NVMe bays",
)
BASEBOARD_CHASSIS = Chassis(
    sku="CHS-SP5-HGX8",
    gpu_slots=8,
    dimm_slots=24,
    nvme_bays=8,
    source="8-GPU baseboard node: 24 DIMMs (MLPerf OAM reference nodes), 8 front NVMe bays",
)


def chassis_for(slug: str) -> Chassis:
    """The chassis a node of GPU ``slug`` is built in: the baseboard one for SXM/OAM
    modules (:func:`on_baseboard`), the 4U PCIe server otherwise."""
    return BASEBOARD_CHASSIS if on_baseboard(slug) else PCIE_CHASSIS


def server_gpu(gpu: Gpu) -> bool:
    """Whether the chassis a node of ``gpu`` is built in takes it (module docstring)."""
    return chassis_for(gpu.slug).takes(gpu)


class ChassisLimitError(InfeasibleError):
    """The plan needs more GPUs, DIMMs or NVMe drives per node than the chassis holds.

    ``binding`` names the slot kind (``"GPU slots per chassis"``, ``"DIMM slots per
    chassis"``, ``"NVMe bays per chassis"``); ``field`` the input to change.
    """


COOLING_BINDING = "GPU cooling per chassis"
"""The binding of a GPU whose cooling the chassis does not take."""


def check_gpu_cooling(chassis: Chassis, gpu: Gpu) -> None:
    """Check that ``chassis`` takes ``gpu``'s cooling kind (module docstring).

    Raises:
        ChassisLimitError: field ``gpu``, binding ``"GPU cooling per chassis"``, naming
            the GPU, its cooling and the kinds the chassis takes.
    """
    if chassis.takes(gpu):
        return
    takes = ", ".join(sorted(chassis.takes_cooling))
    raise ChassisLimitError(
        "gpu",
        template=gettext_noop(
            "the GPU %(slug)s (%(gpu)s, %(cooling)s cooling) does not go into the %(sku)s "
            "chassis, which takes %(takes)s GPUs only"
        ),
        binding=COOLING_BINDING,
        fixes=(Fix("server_gpu"),),
        code="chassis_gpu_cooling",
        values={
            "slug": gpu.slug,
            "gpu": gpu.name,
            "cooling": gpu.cooling or "",
            "sku": chassis.sku,
            "takes": takes,
        },
    )


BASEBOARD_BINDING = "GPUs per baseboard"
"""The binding of a module GPU count its baseboard is not built for."""


def check_baseboard(gpu: Gpu, gpus: int) -> None:
    """Check that ``gpus`` module GPUs of ``gpu`` come on one of its baseboards.

    Args:
        gpu: the node's GPU; a PCIe card (empty ``baseboard_gpus``) always passes.
        gpus: GPUs per node.

    Raises:
        ChassisLimitError: field ``gpus_per_node``, binding ``"GPUs per baseboard"``,
            naming the counts the baseboard comes with (module docstring).
    """
    if baseboard_takes(gpu, gpus):
        return
    board = gpu.baseboard_gpus
    counts = ", ".join(str(n) for n in board)
    fixes = []
    if gpus < max(board):
        fixes.append(Fix("more_gpus"))
    if gpus > min(board):
        fixes.append(Fix("fewer_gpus"))
    raise ChassisLimitError(
        "gpus_per_node",
        template=gettext_noop(
            "the %(gpu)s comes on baseboards of %(counts)s GPUs only, got %(got)s per node"
        ),
        binding=BASEBOARD_BINDING,
        fixes=fixes,
        code="baseboard_gpu_count",
        values={"gpu": gpu.name, "counts": counts, "got": gpus},
    )


def check_chassis(chassis: Chassis, *, gpus: int, dimm_count: int, nvme_drive_count: int) -> None:
    """Check that one node's parts fit ``chassis``.

    Args:
        chassis: the chassis the BOM sells.
        gpus: GPUs per node.
        dimm_count: DIMMs per node.
        nvme_drive_count: NVMe drives per node.

    Raises:
        ChassisLimitError: for the first kind of slot that is short, naming it and the
            counts (source: the chassis' ``source``).
    """
    if gpus > chassis.gpu_slots:
        raise ChassisLimitError(
            "gpus_per_node",
            template=gettext_noop(
                "the %(sku)s chassis holds at most %(max)s GPUs per node, got %(got)s"
            ),
            binding="GPU slots per chassis",
            fixes=(Fix("fewer_gpus"), Fix("more_nodes")),
            code="chassis_gpu_slots",
            values={"max": chassis.gpu_slots, "sku": chassis.sku, "got": gpus},
        )
    if dimm_count > chassis.dimm_slots:
        raise ChassisLimitError(
            "users",
            template=gettext_noop(
                "the plan needs %(dimms)s DIMMs per node, but the %(sku)s chassis has "
                "%(slots)s DIMM slots"
            ),
            binding="DIMM slots per chassis",
            fixes=(
                Fix("fewer_users"),
                Fix("fp8_kv_cache_short"),
                Fix("shorter_context"),
                Fix("more_nodes"),
            ),
            code="chassis_dimm_slots",
            values={"dimms": dimm_count, "sku": chassis.sku, "slots": chassis.dimm_slots},
        )
    if nvme_drive_count > chassis.nvme_bays:
        raise ChassisLimitError(
            "new_conversations_per_day",
            template=gettext_noop(
                "the plan needs %(drives)s NVMe drives per node, but the %(sku)s chassis has "
                "%(bays)s NVMe bays"
            ),
            binding="NVMe bays per chassis",
            fixes=(Fix("fewer_new_conversations"), Fix("fp8_kv_cache_short"), Fix("more_nodes")),
            code="chassis_nvme_bays",
            values={"drives": nvme_drive_count, "sku": chassis.sku, "bays": chassis.nvme_bays},
        )
