"""vLLM's hybrid page layout: unified page sizes per group and the Mamba cache modes."""

from __future__ import annotations

from typing import Any

from sizing.memory.calibrated import pages
from sizing.memory.calibrated.setup import EngineSetup
from sizing.model.architecture import LayerKind
from sizing.model.spec import from_catalog, spec_from_metadata
from sizing.units import GIB

# Gemma-4 style: sliding layers with 16 KV heads of 256, every sixth layer global with 4
# KV heads of 512 (global_head_dim / num_global_key_value_heads, the layout the
# architecture reads; sizing/model/config_reader.py).
GEMMA4_STYLE: dict[str, Any] = {
    "model_type": "gemma4_text",
    "num_hidden_layers": 60,
    "hidden_size": 5376,
    "num_attention_heads": 32,
    "num_key_value_heads": 16,
    "head_dim": 256,
    "global_head_dim": 512,
    "num_global_key_value_heads": 4,
    "sliding_window": 1024,
    "sliding_window_pattern": 6,
    "vocab_size": 262144,
    "max_position_embeddings": 262144,
    "torch_dtype": "bfloat16",
}


def _setup(version: str, **kw: Any) -> EngineSetup:
    return EngineSetup(
        engine="vllm",
        engine_version=version,
        gpu_type="H200",
        gpu_total_memory_gib=139.8,
        max_model_len=32768,
        **kw,
    )


def test_layers_with_smaller_pages_get_larger_blocks() -> None:
    # Sliding page: 16 tokens × 16 heads × (256 + 256) × 2 B = 262,144 B; global page at
    # block 16: 16 × 4 × (512 + 512) × 2 B = 131,072 B, which divides it twice, so the
    # global layers get 32-token blocks (vllm/v1/core/kv_cache_utils.py
    # unify_kv_cache_spec_page_size, 0.31.0 wheel).
    model = spec_from_metadata("org/g4", GEMMA4_STYLE, checkpoint_bytes=60 * GIB, source="test")
    layout = pages.vllm_layout(model, _setup("0.24.0"))
    blocks = {t.kind: t.block_size for t in layout.types}
    assert blocks == {LayerKind.SLIDING: 16, LayerKind.FULL: 32}
    assert layout.page_bytes == 262_144 and layout.block_size == 16
    # One 32,768-token request: 10 global layers in groups of 10 hold 32,768 / 32 = 1,024
    # blocks per group (not 2,048); the 50 sliding layers are 5 groups of
    # cdiv(1,023 + 8,192, 16) + 1 = 577 blocks.
    assert layout.group_size == 10
    assert pages.blocks_per_request(layout, 32768, 8192) == 1024 + 5 * 577


def test_mamba_align_mode_holds_two_state_pages_from_0_31() -> None:
    # Qwen3-Next-80B: 12 full-attention and 36 linear-attention layers. vLLM 0.31.0
    # turns prefix caching on for generative hybrids, which sets mamba_cache_mode
    # "align": 2 state pages per request (MambaSpec.max_memory_usage_bytes).
    model = from_catalog("Qwen/Qwen3-Next-80B-A3B-Instruct")
    setup = _setup("0.31.0", tensor_parallel_size=2)
    new = pages.vllm_layout(model, setup)
    old = pages.vllm_layout(model, _setup("0.19.0", tensor_parallel_size=2))
    assert (new.state_pages, old.state_pages) == (2, 1)
    linear_groups = sum(
        -(-t.layers // new.group_size) for t in new.types if t.kind is LayerKind.LINEAR
    )
    assert linear_groups > 0
    difference = pages.blocks_per_request(new, 32768, 8192) - pages.blocks_per_request(
        old, 32768, 8192
    )
    assert difference == linear_groups
