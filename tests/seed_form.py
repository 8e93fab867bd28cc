"""The seed example as configurator form data, shared by the page tests."""

from __future__ import annotations

from typing import Any


def seed_form(**changes: Any) -> dict[str, Any]:
    """The seed workload (sizing article; docs/sizing.md) as POST data, with ``changes``."""
    data: dict[str, Any] = {
        "model": "Qwen/Qwen3-32B-FP8",
        "context_tokens": 8192,
        "users": 500,
        "active_share": 100,
        "shared_prompt_tokens": 0,
        "kv_dtype": "fp8",
        "gpu": "rtx-pro-6000-se",
        "gpus_per_node": 4,
        "serving_engine": "",
        "new_conversations_per_day": 2000,
    }
    data.update(changes)
    return data
