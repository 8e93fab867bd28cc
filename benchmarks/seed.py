"""The sizing article's worked example as stored sizing inputs (docs/sizing.md)."""

from __future__ import annotations

from typing import Any

from sizing.workload import SEED_WORKLOAD, stored_inputs

SEED_INPUTS: dict[str, Any] = stored_inputs(SEED_WORKLOAD)
