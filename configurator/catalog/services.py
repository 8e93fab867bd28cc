"""Price-list workflows."""

from __future__ import annotations


def pricelist_load_demo() -> int:
    """Load the bundled example price list; returns the number of SKUs. Idempotent."""
    return 0
