"""Configs the sizing cannot read are refused by name; catalog gaps are filled from their
sources, never read as zero."""

from __future__ import annotations

from typing import Any

import pytest

from sizing.errors import ConfigError
from sizing.memory.calibrated import predict
from sizing.memory.calibrated.loaded import rope_table_positions
from sizing.memory.calibrated.setup import EngineSetup
from sizing.model.architecture import LayerKind, conversation_bytes, kv_bytes_per_token
from sizing.model.config_reader import from_config
from sizing.model.spec import from_catalog, spec_from_metadata
from sizing.units import GIB

# A MiMo-V2-Flash style config (the published layout: 48 layers, full layers with 4 KV
# heads of K 192 / V 128, sliding layers with 8 KV heads and a 128-token window; vLLM
# vllm/model_executor/models/mimo_v2_flash.py reads hybrid_layer_pattern 1 as sliding).
PATTERN = ([0] + [1] * 5) * 8
MIMO: dict[str, Any] = {
    "model_type": "mimo_v2_flash",
    "num_hidden_layers": 48,
    "hidden_size": 4096,
    "num_attention_heads": 64,
    "num_key_value_heads": 4,
    "head_dim": 192,
    "v_head_dim": 128,
    "swa_num_attention_heads": 64,
    "swa_num_key_value_heads": 8,
    "swa_head_dim": 192,
    "swa_v_head_dim": 128,
    "sliding_window": 128,
    "hybrid_layer_pattern": PATTERN,
    "vocab_size": 152576,
    "max_position_embeddings": 262144,
    "torch_dtype": "bfloat16",
}


def test_hybrid_layer_pattern_sizes_each_layer_by_its_own_geometry() -> None:
    arch = from_config(MIMO)
    assert arch.count(LayerKind.FULL) == 8 and arch.count(LayerKind.SLIDING) == 40
    full = next(x for x in arch.layers if x.kind is LayerKind.FULL)
    sliding = next(x for x in arch.layers if x.kind is LayerKind.SLIDING)
    assert (full.kv_heads, full.k_head_dim, full.v_head_dim) == (4, 192, 128)
    assert (sliding.kv_heads, sliding.k_head_dim, sliding.v_head_dim) == (8, 192, 128)
    assert sliding.window_tokens == 128
    # bf16, per token: 8 full layers × 4 heads × (192 + 128) × 2 B = 20,480 B; a 32,768
    # token conversation adds the 40 sliding layers' 128-token windows:
    # 20,480 × 32,768 + 40 × 8 × 320 × 2 B × 128 = 697,303,040 B.
    assert kv_bytes_per_token(arch, "auto") == 20_480
    assert conversation_bytes(arch, "auto", 32768) == 697_303_040


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"hybrid_layer_pattern": None}, "swa_num_key_value_heads, swa_head_dim, swa_v_head_dim"),
        ({"compress_ratios": [1, 4, 4]}, "compress_ratios"),
        ({"local_layer_ids": [0, 1, 2]}, "local_layer_ids"),
    ],
)
def test_layout_keys_it_does_not_read_are_refused_by_name(
    change: dict[str, Any], named: str
) -> None:
    cfg = {k: v for k, v in {**MIMO, **change}.items() if v is not None}
    with pytest.raises(ConfigError) as err:
        from_config(cfg)
    assert err.value.code == "config_layout_unread"
    assert named in str(err.value)


def test_a_bad_hybrid_layer_pattern_is_refused() -> None:
    with pytest.raises(ConfigError) as err:
        from_config({**MIMO, "hybrid_layer_pattern": [2] * 48})
    assert err.value.code == "config_hybrid_layer_pattern"


def test_vocabulary_comes_from_the_config_class_default() -> None:
    # transformers Gemma3TextConfig: vocab_size 262208 (the catalog's trimmed config has
    # none); the granite-3.1-8b entry states its 49155 (reference model_facts.json).
    assert from_catalog("google/gemma-3-27b-it").architecture.vocab_size == 262_208
    assert from_catalog("ibm-granite/granite-3.1-8b-instruct").architecture.vocab_size == 49_155


def test_the_memory_model_refuses_a_missing_vocabulary() -> None:
    cfg = {
        "model_type": "some_new_type",
        "num_hidden_layers": 2,
        "hidden_size": 256,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "torch_dtype": "bfloat16",
    }
    model = spec_from_metadata("org/new", cfg, checkpoint_bytes=10 * GIB, source="test")
    setup = EngineSetup(
        engine="vllm",
        engine_version="0.19.0",
        gpu_type="H100 80GB",
        gpu_total_memory_gib=79.19,
        max_model_len=4096,
    )
    with pytest.raises(ConfigError) as err:
        predict(model, setup)
    assert err.value.code == "config_vocab_missing" and "vocab_size" in str(err.value)


def test_an_fp8_checkpoint_is_sized_at_its_own_bytes() -> None:
    # GLM-5.3-Flash: the engine line "Checkpoint size: 305.79 GiB" (FP8 weights, catalog
    # source), not the 593.8 GiB its parameters would take at 16 bit.
    model = from_catalog("zai-org/GLM-5.3-Flash")
    assert model.weight_format == "fp8"
    assert model.weights_bytes / GIB == pytest.approx(305.79)


@pytest.mark.parametrize(
    ("rope", "positions"),
    [
        (None, 32768),
        ({"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}, 32768),
        ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, 131072),
        ({"type": "linear", "factor": 2.0}, 65536),
        ({"rope_type": "longrope", "original_max_position_embeddings": 4096}, 32768 + 4096),
        ({"rope_type": "dynamic", "factor": 2.0}, 32768),
    ],
)
def test_rope_table_positions_follow_vllms_scaling_classes(
    rope: dict[str, Any] | None, positions: int
) -> None:
    # vllm/model_executor/layers/rotary_embedding/ (0.31.0 wheel): yarn builds
    # original × factor positions, linear max × factor, longrope a short and a long table.
    assert rope_table_positions({"max_position_embeddings": 32768, "rope_scaling": rope}) == (
        positions
    )
