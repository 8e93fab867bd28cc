"""The NVMe tier: capacity, write volume per day against drive endurance.

Rules (sizing article; docs/sizing.md §5):

- vLLM's tiering hands every newly offloaded prompt block to all secondary tiers at
  once (vLLM blog, 10 Sept 2026), so each new conversation writes its prompt's KV to
  the NVMe tier: at 1 GiB per 8K prompt, 2,000 new conversations a day write about
  2.1 TB a day.
- The tier holds conversations from earlier in the day: one day of new conversations.
- Endurance: a drive may take ``DWPD × capacity`` of writes a day over its warranty
  (read-intensive drives about 1 DWPD, mixed-use about 3; hardware notes).
- A Gen5 x4 drive reads below 16 GB/s; engines route the file tier through CPU memory.
- The chassis has a fixed number of NVMe bays (4 on the ASRock Rack 4U8G-TURIN2,
  ServeTheHome review). When a day of conversations needs more drives than that, the
  tier is capped at the bays with the largest drives and holds the most recent part of
  the day; the plan says so (a shared NAS or S3 tier takes the rest).
- Several nodes: the router keeps each conversation on its instance (``sizing.layout.cluster``),
  so a node writes and holds only its own share of the day's new conversations, the
  day's total over the nodes rounded up; each node gets the drives for that share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.hardware.catalog import NvmeDrive, nvme_drives
from sizing.units import TB

WARRANTY_YEARS = 5
"""Years over which a drive's DWPD rating applies (enterprise drive warranties)."""


@dataclass(frozen=True)
class NvmeTier:
    """The NVMe tier of one node.

    Attributes:
        writes_tb_per_day: KV written to one node's tier per day, TB (10^12 bytes).
        capacity_needed_tb: one day of one node's new conversations, TB.
        drive: the chosen drive model, or ``None`` when no new conversations are given.
        drive_count: drives in one node's tier.
        capped: True when the chassis's bays limit the tier below a day of conversations.
        conversation_bytes: KV bytes of one full-length conversation (whole model).
        nodes: the nodes the day's new conversations are spread over.
        total_writes_tb_per_day: KV written per day by all nodes together, TB.
    """

    writes_tb_per_day: float
    capacity_needed_tb: float
    drive: NvmeDrive | None
    drive_count: int
    capped: bool = False
    conversation_bytes: int = 0
    nodes: int = 1
    total_writes_tb_per_day: float = 0.0

    @property
    def read_gbs(self) -> float:
        """The tier's sequential read rate, GB/s: drives × each drive's rated read
        (``seq_read_gbs``, hardware.json); 0 without a drive."""
        return self.drive.seq_read_gbs * self.drive_count if self.drive else 0.0

    @property
    def reload_ms(self) -> float | None:
        """Reading one conversation back from one drive of the tier, ms
        (:func:`reload_seconds_from_nvme`), or ``None`` without a drive. The engines then
        copy it from CPU memory to the GPU (seed: only the CPU tier has direct GPU
        access), which the CPU tier's reload time covers."""
        if self.drive is None:
            return None
        return reload_seconds_from_nvme(self.conversation_bytes, self.drive) * 1000

    @property
    def capacity_tb(self) -> float:
        """Raw capacity of the tier, TB."""
        return self.drive.capacity_tb * self.drive_count if self.drive else 0.0

    @property
    def conversations_per_node(self) -> int:
        """Full-length conversations one node's tier holds: its raw capacity in whole
        bytes over ``conversation_bytes``, rounded down (0 without a drive)."""
        if self.drive is None or self.conversation_bytes <= 0:
            return 0
        return round(self.capacity_tb * TB) // self.conversation_bytes

    @property
    def rated_writes_tb_per_day(self) -> float:
        """Writes per day the drives are rated for (DWPD × capacity), TB."""
        return self.drive.dwpd * self.capacity_tb if self.drive else 0.0

    @property
    def top_rated_drives(self) -> tuple[int, str, float] | None:
        """``(drive count, drive model, DWPD)`` when the chosen drive is already rated for
        the most drive writes per day of any drive in the catalog (hardware.json), so
        that a drive rated for more writes cannot be the fix; else ``None``."""
        if self.drive is None or self.drive.dwpd < max(d.dwpd for d in nvme_drives()):
            return None
        return self.drive_count, self.drive.model, self.drive.dwpd

    @property
    def lifetime_years(self) -> float | None:
        """Years until the rated endurance is used up at this write volume."""
        if not self.drive or self.writes_tb_per_day <= 0:
            return None
        return WARRANTY_YEARS * self.rated_writes_tb_per_day / self.writes_tb_per_day


def nvme_tier(
    *,
    new_conversations_per_day: int,
    conversation_bytes: int,
    max_drives: int = 4,
    nodes: int = 1,
) -> NvmeTier:
    """Size each node's NVMe tier for a day of new conversations.

    Chooses the drive model and count with the least raw capacity that holds one day
    of a node's conversations and whose rated writes per day cover its write volume.

    Args:
        new_conversations_per_day: conversations started per day on all nodes together
            (0: no NVMe tier).
        conversation_bytes: KV bytes of one full-length conversation (whole model).
        max_drives: NVMe bays of the chassis for the KV tier.
        nodes: nodes sharing the day's conversations; each takes ``ceil(new / nodes)``
            (module docstring).

    Raises:
        ValueError: if an argument is negative, or ``max_drives`` or ``nodes`` below 1.
    """
    if new_conversations_per_day < 0 or conversation_bytes < 0 or max_drives < 1 or nodes < 1:
        raise ValueError(
            "new_conversations_per_day and conversation_bytes must be >= 0, "
            "max_drives and nodes >= 1"
        )
    total_tb = new_conversations_per_day * conversation_bytes / TB
    writes_tb = math.ceil(new_conversations_per_day / nodes) * conversation_bytes / TB
    if writes_tb == 0:
        return NvmeTier(0.0, 0.0, None, 0, nodes=nodes)
    options = []
    for drive in nvme_drives():
        count = max(
            1,
            math.ceil(writes_tb / drive.capacity_tb),
            math.ceil(writes_tb / (drive.dwpd * drive.capacity_tb)),
        )
        if count <= max_drives:
            options.append((count * drive.capacity_tb, drive.dwpd, drive, count))
    if options:
        _raw, _dwpd, drive, count = min(options, key=lambda o: (o[0], -o[1]))
        return NvmeTier(
            writes_tb,
            writes_tb,
            drive,
            count,
            conversation_bytes=conversation_bytes,
            nodes=nodes,
            total_writes_tb_per_day=total_tb,
        )
    # More than the bays hold: fill every bay with the drive rated for the most writes.
    drive = max(nvme_drives(), key=lambda d: (d.dwpd * d.capacity_tb, d.capacity_tb))
    return NvmeTier(
        writes_tb,
        writes_tb,
        drive,
        max_drives,
        capped=True,
        conversation_bytes=conversation_bytes,
        nodes=nodes,
        total_writes_tb_per_day=total_tb,
    )


def reload_seconds_from_nvme(conversation_bytes: int, drive: NvmeDrive) -> float:
    """Seconds to read one conversation from one drive at its sequential read rate
    (the drive's datasheet figure in the catalog, GB/s = 10^9 B/s; docs/sizing.md §5)."""
    return conversation_bytes / (drive.seq_read_gbs * 1e9)
