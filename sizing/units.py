"""Units of memory and the conversions between them.

GiB (gibibyte) is 2^30 bytes, the unit CUDA, PyTorch and the engines' logs use; GB
(gigabyte) is 10^9 bytes, the unit DIMMs, drives and datasheets are sold in. A value
never changes unit without passing through one of these functions.

Source: IEC 80000-13 (binary prefixes); the seed document's "500 GiB, about 537 GB".
"""

from __future__ import annotations

import math

GIB = 2**30
"""Bytes in one GiB."""
MIB = 2**20
"""Bytes in one MiB."""
KIB = 2**10
"""Bytes in one KiB."""
GB = 10**9
"""Bytes in one GB."""
TB = 10**12
"""Bytes in one TB."""


def bytes_to_gib(n_bytes: float) -> float:
    """Return ``n_bytes`` in GiB (2^30 bytes)."""
    return n_bytes / GIB


def bytes_to_gb(n_bytes: float) -> float:
    """Return ``n_bytes`` in GB (10^9 bytes)."""
    return n_bytes / GB


def gib_to_bytes(gib: float) -> int:
    """Return ``gib`` GiB as a whole number of bytes, rounded to the nearest byte."""
    return round(gib * GIB)


def gib_to_gb(gib: float) -> float:
    """Return ``gib`` GiB expressed in GB: 500 GiB is 536.87 GB."""
    return gib * GIB / GB


def gb_to_gib(gb: float) -> float:
    """Return ``gb`` GB expressed in GiB: 96 GB is 89.41 GiB."""
    return gb * GB / GIB


def floor_to(value: float, step: float) -> float:
    """Round ``value`` down to a multiple of ``step`` (``step`` > 0).

    Raises:
        ValueError: if ``step`` is not positive.
    """
    if step <= 0:
        raise ValueError(f"step must be positive, got {step}")
    return math.floor(value / step + 1e-9) * step
