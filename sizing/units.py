"""Units of memory: bytes in one KiB, MiB, GiB, GB and TB.

GiB (gibibyte) is 2^30 bytes, the unit CUDA, PyTorch and the engines' logs use; GB
(gigabyte) is 10^9 bytes, the unit DIMMs, drives and datasheets are sold in. A value
changes unit by these constants (``kv_bytes / GIB``), and its name says its unit.

Source: IEC 80000-13 (binary prefixes); the seed document's "500 GiB, about 537 GB".
"""

from __future__ import annotations

GIB = 2**30
"""Bytes in one GiB."""
GB = 10**9
"""Bytes in one GB."""
TB = 10**12
"""Bytes in one TB."""
