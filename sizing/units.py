"""Units of memory: bytes in one KiB, MiB, GiB, GB and TB.

GiB (gibibyte) is 2^30 bytes, the unit CUDA, PyTorch and the engines' logs use; GB
(gigabyte) is 10^9 bytes, the unit DIMMs, drives and datasheets are sold in. A value
changes unit by these constants (``kv_bytes / GIB``), and its name says its unit.

Source: IEC 80000-13 (binary prefixes); the sizing article's "500 GiB, about 537 GB".
"""

from __future__ import annotations

import math

GIB = 2**30
"""Bytes in one GiB."""
GB = 10**9
"""Bytes in one GB."""
TB = 10**12
"""Bytes in one TB."""


def whole_gib(gib: float) -> int:
    """``gib`` rounded down to a whole GiB, as the customer reads a CPU tier: vLLM is
    given the tier of the conversations it keeps in whole GiB
    (``--kv-offloading-size``, :mod:`sizing.memory.vllm_buffer`), so a figure rounded down never
    claims more than the engine gets (178.81 GiB reads 178 GiB). A value within 10^-6 GiB
    below a whole number is that number (the seed's 500 GiB stays 500).

    Raises:
        ValueError: if ``gib`` is negative.
    """
    if gib < 0:
        raise ValueError(f"gib must be >= 0, got {gib}")
    return math.floor(gib + 1e-6)
