"""The CPU-tier buffer of one vLLM instance as the plan sells it.

vLLM 0.31.0 and 0.33.0 (``vllm/engine/arg_utils.py``,
``vllm/config/vllm.py::_post_init_kv_transfer_config``): ``--kv-offloading-size`` is a
float in GiB, the buffer of one engine instance summed over its TP × PP workers, and
vLLM turns it into ``cpu_bytes_to_use = size × 2^30`` bytes. The plan states both so
that the flag, the connector's byte count and the DIMMs describe the same buffer; the
files that carry them are written by :mod:`sizing.engines.vllm`.

Seed example: 125 GiB per instance → ``--kv-offloading-size 125`` and
``cpu_bytes_to_use`` 134,217,728,000.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sizing.units import GIB


@dataclass(frozen=True)
class VllmOffload:
    """The native offload buffer of one vLLM instance.

    Attributes:
        kv_offloading_size_gib: value of ``--kv-offloading-size`` (whole GiB).
        cpu_bytes_to_use: value of ``cpu_bytes_to_use`` (bytes, total over workers).
    """

    kv_offloading_size_gib: int
    cpu_bytes_to_use: int


def offload(per_instance_gib: float) -> VllmOffload | None:
    """The vLLM buffer for a tier of ``per_instance_gib`` GiB per instance.

    The size is rounded up to a whole GiB so that the flag and the byte count describe
    exactly the same buffer and never less than the plan. ``None`` when there is no
    tier (offloading stays off, vLLM's default).

    Raises:
        ValueError: if ``per_instance_gib`` is negative.
    """
    if per_instance_gib < 0:
        raise ValueError(f"per_instance_gib must be >= 0, got {per_instance_gib}")
    if per_instance_gib == 0:
        return None
    size = math.ceil(per_instance_gib - 1e-9)
    return VllmOffload(kv_offloading_size_gib=size, cpu_bytes_to_use=size * GIB)
