"""Hardware specifications bundled with the engine: GPUs, platforms, DIMMs, NVMe, PCIe.

The data file ``sizing/data/hardware.json`` is reviewed like code; each entry lists the
datasheets and measurements it was taken from (NVIDIA and AMD product pages, nvidia-smi
and torch readings from public engine logs, vendor drive briefs).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from sizing.data_files import data_text
from sizing.errors import SizingError, gettext_noop


@dataclass(frozen=True)
class Gpu:
    """One GPU model.

    Attributes:
        slug: the identifier used on the CLI and in forms (``rtx-pro-6000-se``).
        name: the vendor's product name.
        marketed_memory_gb: memory as sold, in GB (96 for the RTX PRO 6000).
        reported_gib: total the driver reports (nvidia-smi), in GiB (95.59).
        torch_total_gib: total CUDA/PyTorch report, in GiB, or ``None`` if unknown.
        memory_bandwidth_gbps: HBM/GDDR bandwidth in GB/s.
        bf16_dense_tflops: dense BF16 tensor throughput in TFLOPS.
        fp8_dense_tflops: dense FP8 tensor throughput in TFLOPS, or ``None``.
        pcie_gen: PCIe generation of the host link.
        fp8_kv_cache: whether an FP8 KV cache is supported natively.
        tdp_w: board power in W.
        nvlink_gbps_bidirectional: NVLink bandwidth per GPU, both directions, GB/s
            (``None`` without NVLink).
        cooling: how the card is cooled (``passive``, ``blower``, ``flow-through``,
            ``open-air``, ``module``; ``cooling`` in hardware.json, from the vendor's
            datasheet): what decides which chassis takes it (:func:`chassis_cooling`).
        baseboard_gpus: for a module GPU, the GPU counts its baseboard comes with (HGX
            H200 4 or 8, HGX B200 8, AMD UBB 8; ``baseboard_gpus`` in hardware.json with
            ``baseboard_gpus_source``); empty for a PCIe card, any count up to the slots.
    """

    slug: str
    name: str
    marketed_memory_gb: float
    reported_gib: float
    torch_total_gib: float | None
    memory_bandwidth_gbps: float | None
    bf16_dense_tflops: float | None
    fp8_dense_tflops: float | None
    pcie_gen: int
    fp8_kv_cache: bool
    tdp_w: int | None
    nvlink_gbps_bidirectional: float | None = None
    cooling: str | None = None
    baseboard_gpus: tuple[int, ...] = ()

    @property
    def nvlink_gbps_per_direction(self) -> float | None:
        """NVLink bandwidth per GPU in one direction, GB/s (``None`` without NVLink)."""
        bidi = self.nvlink_gbps_bidirectional
        return bidi / 2 if bidi else None


@dataclass(frozen=True)
class Platform:
    """A dual-socket server platform's memory and I/O layout.

    ``dimm_slots`` and ``nvme_bays`` are the chassis's (ASRock Rack 4U8G-TURIN2: 24 DIMM
    slots at one DIMM per channel, 4 NVMe bays; ServeTheHome review), which can be fewer
    than the CPUs allow (2 DIMMs per channel on AMD EPYC 9005).
    """

    slug: str
    name: str
    sockets: int
    memory_channels_per_socket: int
    max_dimms_per_channel: int
    ddr5_mts_1dpc: int
    peak_memory_bw_per_socket_gbs: float
    dimm_slots: int
    nvme_bays: int

    @property
    def dimms_per_channel_max(self) -> int:
        """DIMMs per channel the chassis has slots for (24 slots on 24 channels: 1)."""
        channels = self.sockets * self.memory_channels_per_socket
        return max(1, min(self.max_dimms_per_channel, self.dimm_slots // channels))


@dataclass(frozen=True)
class NvmeDrive:
    """An NVMe drive model at one capacity."""

    slug: str
    model: str
    capacity_tb: float
    dwpd: float
    pcie_gen: int
    seq_read_gbs: float
    seq_write_gbs: float


@cache
def _data() -> dict[str, Any]:
    text = data_text("hardware.json")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def gpus() -> dict[str, Gpu]:
    """All GPUs with a reported memory figure, by slug."""
    out: dict[str, Gpu] = {}
    for g in _data()["gpus"]:
        if g["reported_gib"] is None and g["torch_total_gib"] is None:
            continue
        out[g["slug"]] = Gpu(
            slug=g["slug"],
            name=g["name"],
            marketed_memory_gb=float(g["marketed_memory_gb"]),
            reported_gib=float(g["reported_gib"] or g["torch_total_gib"]),
            torch_total_gib=g["torch_total_gib"],
            memory_bandwidth_gbps=g["memory_bandwidth_gbps"],
            bf16_dense_tflops=g["bf16_dense_tflops"],
            fp8_dense_tflops=g["fp8_dense_tflops"],
            pcie_gen=int(g["pcie_gen"] or 5),
            fp8_kv_cache=g["fp8_kv_cache"] is True,
            tdp_w=g["tdp_w"],
            nvlink_gbps_bidirectional=(g.get("nvlink") or {}).get("gbps_per_gpu_bidirectional"),
            cooling=g.get("cooling"),
            baseboard_gpus=tuple(g.get("baseboard_gpus", ())),
        )
    return out


@cache
def chassis_cooling() -> dict[str, frozenset[str]]:
    """The GPU cooling kinds each chassis takes, by chassis SKU.

    From ``chassis[].takes_cooling`` in hardware.json, whose ``sources`` name the chassis
    review and NVIDIA's datasheets (a rack server's fans blow through passive heatsinks
    and blower cards; a workstation card's flow-through fans fight that airflow).
    """
    return {c["sku"]: frozenset(c["takes_cooling"]) for c in _data()["chassis"]}


def gpu(slug: str) -> Gpu:
    """The GPU with ``slug``.

    Raises:
        SizingError: on field ``gpu`` for an unknown slug, listing the known ones.
    """
    try:
        return gpus()[slug]
    except KeyError:
        known = ", ".join(sorted(gpus()))
        raise SizingError(
            "gpu",
            template=gettext_noop("unknown GPU %(gpu)r; known GPUs: %(known)s"),
            code="gpu_unknown",
            values={"gpu": slug, "known": known},
        ) from None


@lru_cache(maxsize=64)
def platform(slug: str = "epyc-9005-2s") -> Platform:
    """The server platform with ``slug`` (default: dual AMD EPYC 9005).

    Raises:
        SizingError: on field ``platform`` for an unknown slug.
    """
    for p in _data()["platforms"]:
        if p["slug"] == slug:
            return Platform(
                slug=p["slug"],
                name=p["name"],
                sockets=p["sockets"],
                memory_channels_per_socket=p["memory_channels_per_socket"],
                max_dimms_per_channel=p["max_dimms_per_channel"],
                ddr5_mts_1dpc=p["ddr5_mts_1dpc"],
                peak_memory_bw_per_socket_gbs=p["peak_memory_bw_per_socket_gbs"],
                dimm_slots=p["dimm_slots"],
                nvme_bays=p["nvme_bays"],
            )
    raise SizingError(
        "platform",
        template=gettext_noop("unknown server platform %(platform)r"),
        code="platform_unknown",
        values={"platform": slug},
    )


def dimm_sizes_gb() -> tuple[int, ...]:
    """DDR5 RDIMM capacities offered by server OEMs, in GB, ascending."""
    return tuple(sorted(_data()["dimm_sizes_gb"]))


@cache
def nvme_drives() -> tuple[NvmeDrive, ...]:
    """Gen5 NVMe drives the BOM can contain, smallest first."""
    return tuple(
        NvmeDrive(**{k: d[k] for k in NvmeDrive.__dataclass_fields__})
        for d in sorted(_data()["nvme_drives"], key=lambda d: d["capacity_tb"])
    )


def pcie_h2d_gbs(gen: int) -> float:
    """Measured host-to-device bandwidth from pinned memory over an x16 link, in GB/s.

    Source: nvbandwidth logs, H100 Gen5 copy-engine copy 55.37 GB/s; A100 Gen4 25.13 GB/s
    (NVIDIA nvbandwidth issue #42).
    """
    pcie = _data()["pcie"]
    key = "gen5_x16_h2d_pinned_measured_gbs" if gen >= 5 else "gen4_x16_h2d_pinned_measured_gbs"
    return float(pcie[key])
