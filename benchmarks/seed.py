"""The seed document's worked example as ``plan_create`` arguments (DESIGN §3)."""

from __future__ import annotations

from typing import Any

SEED_INPUTS: dict[str, Any] = {
    "model_id": "Qwen/Qwen3-32B-FP8",
    "context_tokens": 8192,
    "users": 500,
    "gpu_slug": "rtx-pro-6000-se",
    "gpus_per_node": 4,
    "kv_dtype": "fp8",
    "new_conversations_per_day": 2000,
}
