"""Verification workflows."""

from __future__ import annotations


def benchmarks_load_initial() -> int:
    """Load the bundled benchmark records; returns how many exist. Idempotent."""
    return 0
