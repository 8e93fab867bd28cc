"""The space the configuration search (:mod:`sizing.search.cheapest`) walks, and the price floors
it bounds it with.

A configuration is a :class:`~sizing.plan.orchestrator.PlanRequest` whose workload fixes the GPU
type, the GPUs per node, the KV dtype, the NVMe tier (on, or off by ``without_nvme_tier``),
the tensor parallel size, the host memory per node and the shared tier. The space is
built in two stages, so that no configuration is sized twice and none that the plan's
own rule already covers is tried again:

- **Base configurations** (:func:`candidates`): every GPU type × GPUs per node the
  chassis takes (:func:`gpu_counts`) × KV dtype (:func:`kv_dtypes_for`) × NVMe tier on
  and off, with the plan's own rules for the rest: the smallest TP that holds one
  request (:mod:`sizing.plan.layout_choice`), a CPU tier that keeps every user warm where the slots
  allow (:mod:`sizing.memory.host_memory`), and a shared tier where the plan has more than one
  node or more users than its CPU tiers hold
  (:attr:`sizing.layout.cluster.Cluster.needs_shared_tier`).
- **Variants** (:func:`variants`) of a sized configuration, each fixing one more
  choice, in this order (each variant has one parent, so none is generated twice):
  every larger TP that divides the node (fewer, faster replicas; vLLM's divisibility
  rule, :func:`sizing.plan.layout_choice.valid_tp_sizes`); every smaller balanced DIMM layout that
  still meets the host-memory baseline of twice the GPU memory
  (:func:`sizing.memory.host_memory.layout_totals_gb`: cheaper DRAM, a CPU tier capped by it,
  a lower CPU hit rate); and, where the configuration has a shared tier, the same
  without one.

Per GPU type the space is bounded by a constant (7 counts × 2 NVMe options × at most
4 TP sizes × the chassis' DIMM layouts × 2 shared-tier options), so the search cost
grows at most linearly with the number of GPU types.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from sizing.bom.lines import CPU_SKU, Bom, BomLine, dimm_sku, gpu_sku
from sizing.hardware import catalog
from sizing.hardware.chassis import baseboard_takes, chassis_for
from sizing.memory.host_memory import layout_totals_gb
from sizing.plan.layout_choice import valid_tp_sizes
from sizing.plan.orchestrator import Plan, PlanRequest

LAYOUT_FIELDS = (
    "gpu",
    "gpus_per_node",
    "kv_dtype",
    "new_conversations_per_day",
    "tensor_parallel_size",
    "max_host_memory_gb",
    "without_shared_tier",
    "without_nvme_tier",
    "without_cpu_tier",
)
"""The :class:`~sizing.workload.Workload` fields a configuration of the space fixes (the
others are the customer's, ``new_conversations_per_day`` kept as given): what a
recommended configuration hands to a quote or a form."""

GPUS_PER_NODE = (2, 3, 4, 5, 6, 7, 8)
"""GPU counts per node the builder sells (docs/sizing.md §9: 2 to 8 GPUs per node)."""


def kv_dtypes_for(request: PlanRequest, gpu_slug: str) -> tuple[str, ...]:
    """KV dtypes searched on ``gpu_slug``: FP8 where the customer allows it (the request
    asks for ``fp8``) and the GPU runs an FP8 cache natively (``fp8_kv_cache`` in the
    hardware catalog), 16-bit where FP8 is allowed but not native, else the requested
    dtype.

    Raises:
        SizingError: for an unknown GPU slug (field ``gpu``).
    """
    if request.workload.kv_dtype != "fp8":
        return (request.workload.kv_dtype,)
    return ("fp8",) if catalog.gpu(gpu_slug).fp8_kv_cache else ("auto",)


def gpu_counts(gpu_slug: str, gpus_per_node: Sequence[int]) -> tuple[int, ...]:
    """The counts of ``gpus_per_node`` a node of ``gpu_slug`` really takes: a module GPU
    only as many as its baseboard comes with (``Gpu.baseboard_gpus``, hardware.json:
    HGX H200 4 or 8, HGX B200 8, AMD UBB 8), a PCIe card any count up to the slots.

    Raises:
        SizingError: for an unknown GPU slug (field ``gpu``).
    """
    gpu = catalog.gpu(gpu_slug)
    slots = chassis_for(gpu_slug).gpu_slots
    return tuple(n for n in gpus_per_node if n <= slots and baseboard_takes(gpu, n))


def candidates(
    request: PlanRequest,
    gpu_slugs: Iterable[str],
    gpus_per_node: Sequence[int] = GPUS_PER_NODE,
) -> list[PlanRequest]:
    """The base configurations of the module docstring, in a stable order.

    Args:
        request: the customer's workload; its GPU, count, TP, host memory, shared tier
            and NVMe tier are replaced (the plan's rules; the NVMe tier tried on and off
            by ``without_nvme_tier`` where it asks for one), its other inputs kept, the
            new conversations per day among them.
        gpu_slugs: GPU types to search.
        gpus_per_node: GPU counts per node to search.

    Raises:
        SizingError: for an unknown GPU slug (field ``gpu``).
    """
    work = request.workload
    nvme_options = (False, True) if work.nvme_conversations_per_day else (work.without_nvme_tier,)
    out = []
    for slug in dict.fromkeys(gpu_slugs):
        for dtype in kv_dtypes_for(request, slug):
            for count in gpu_counts(slug, gpus_per_node):
                for without_nvme in nvme_options:
                    out.append(
                        _with(
                            request,
                            gpu=slug,
                            gpus_per_node=count,
                            kv_dtype=dtype,
                            without_nvme_tier=without_nvme,
                            tensor_parallel_size=None,
                            max_host_memory_gb=None,
                            without_shared_tier=False,
                        )
                    )
    return out


def _with(request: PlanRequest, **changes: Any) -> PlanRequest:
    return replace(request, workload=request.workload.replace(**changes))


def variants(plan: Plan) -> list[PlanRequest]:
    """The variants of a sized configuration (module docstring): larger TP sizes while
    the TP is the plan's choice, smaller DIMM layouts while the host memory is, and no
    shared tier where the plan has one."""
    request = plan.request
    work = request.workload
    out: list[PlanRequest] = []
    if work.tensor_parallel_size is None and work.max_host_memory_gb is None:
        chosen = plan.parallelism.tensor_parallel_size
        if plan.parallelism.pipeline_parallel_size == 1:
            arch = request.model.architecture
            for tp in valid_tp_sizes(arch, work.gpus_per_node):
                if tp > chosen:
                    out.append(_with(request, tensor_parallel_size=tp))
    if (
        work.max_host_memory_gb is None
        and not work.without_shared_tier
        and plan.cpu_tier.total_gib > 0
    ):
        baseline = 2 * plan.gpu.marketed_memory_gb * work.gpus_per_node
        for total in layout_totals_gb(plan.platform):
            if baseline <= total < plan.host.total_gb:
                out.append(_with(request, max_host_memory_gb=total))
    serving = plan.serving
    if not work.without_shared_tier and serving is not None and serving.shared is not None:
        out.append(_with(request, without_shared_tier=True))
    return out


def node_floor(request: PlanRequest, dimms: tuple[int, int] | None = None) -> Bom:
    """The lines every node of ``request``'s GPU type and count carries, whatever else it
    is sized for: the chassis, one CPU per socket, the GPUs and, when given, a DIMM
    layout ``(count, size GB)`` (:mod:`sizing.bom.lines`).

    Every BOM of such a plan has these lines at least once (once per node), and no price
    is negative (the price list refuses one), so this BOM's price is a lower bound of the
    plan's when the DIMM layout is the cheapest that meets the host-memory baseline
    (:func:`floor_price`).
    """
    slug, gpus = request.workload.gpu, request.workload.gpus_per_node
    chassis = chassis_for(slug)
    sockets = catalog.platform(request.platform_slug).sockets
    lines = [
        BomLine(chassis.sku, "chassis", 1, 1, "", ""),
        BomLine(CPU_SKU, "cpu", sockets, sockets, "", ""),
        BomLine(gpu_sku(slug), "gpu", gpus, gpus, "", ""),
    ]
    if dimms is not None:
        lines.append(BomLine(dimm_sku(dimms[1]), "dimm", dimms[0], dimms[0], "", ""))
    return Bom(nodes=1, lines=tuple(lines))


def floor_price(request: PlanRequest, price: Callable[[Bom], Any]) -> Any:
    """A lower bound of the price of any plan of ``request``'s GPU type and count: the
    :func:`node_floor` with the cheapest balanced DIMM layout that holds twice the
    node's GPU memory (every plan's host memory is at least that, docs/sizing.md §4), or
    without DIMMs when none of those layouts is priced. ``None`` when the chassis, CPUs
    or GPUs are not priced."""
    work = request.workload
    platform = catalog.platform(request.platform_slug)
    baseline = 2 * catalog.gpu(work.gpu).marketed_memory_gb * work.gpus_per_node
    channels = platform.sockets * platform.memory_channels_per_socket
    best = None
    for dpc in range(1, platform.dimms_per_channel_max + 1):
        for size in catalog.dimm_sizes_gb():
            if channels * dpc * size < baseline:
                continue
            amount = price(node_floor(request, (channels * dpc, size)))
            if amount is not None and (best is None or amount < best):
                best = amount
    return best if best is not None else price(node_floor(request))
