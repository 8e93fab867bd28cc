"""Layer geometry from config.json, for every attention class, and bad configs."""

from __future__ import annotations

import pytest

from sizing.errors import ConfigError
from sizing.model.architecture import LayerKind, conversation_bytes, kv_bytes_per_token
from sizing.model.checkpoint import param_count, weight_format
from sizing.model.config_reader import from_config
from sizing.model.spec import catalog_entry, catalog_ids, from_catalog


def _config(repo_id: str) -> dict:
    entry = catalog_entry(repo_id)
    assert entry is not None
    return dict(entry["config"])


@pytest.mark.parametrize("repo_id", catalog_ids())
def test_every_catalog_model_loads(repo_id: str) -> None:
    # Catalog entries come from model_facts.json and the ground-truth cases.
    spec = from_catalog(repo_id)
    assert spec.weights_bytes > 0
    assert any(layer.kind is not LayerKind.NONE for layer in spec.architecture.layers)


def test_catalog_holds_at_least_40_models() -> None:
    assert len(catalog_ids()) >= 40


def test_explicit_head_dim_wins() -> None:
    # Qwen3-32B config: hidden 5120 / 64 heads = 80, but head_dim 128.
    arch = from_catalog("Qwen/Qwen3-32B").architecture
    assert {layer.k_head_dim for layer in arch.layers} == {128}


def test_gemma_2_alternates_sliding_and_global_layers() -> None:
    # transformers Gemma2Config: layer 0 sliding, then alternating; window 4096.
    arch = from_catalog("google/gemma-2-27b-it").architecture
    assert arch.layers[0].kind is LayerKind.SLIDING and arch.layers[1].kind is LayerKind.FULL
    assert arch.count(LayerKind.SLIDING) == arch.count(LayerKind.FULL) == 23
    assert arch.layers[0].window_tokens == 4096


def test_llama_4_chunked_local_layers() -> None:
    # Llama-4-Scout config: no_rope_layers 1 = chunked (8192), 0 = global: 36 + 12.
    arch = from_catalog("meta-llama/Llama-4-Scout-17B-16E-Instruct").architecture
    assert arch.count(LayerKind.CHUNKED) == 36 and arch.count(LayerKind.FULL) == 12
    assert arch.layers[0].window_tokens == 8192


def test_nemotron_h_pattern() -> None:
    # hybrid_override_pattern of Nemotron-H-8B: 24 M, 4 *, 24 - (model_facts.json).
    arch = from_catalog("nvidia/Nemotron-H-8B-Base-8K").architecture
    assert arch.count(LayerKind.MAMBA) == 24 and arch.count(LayerKind.FULL) == 4
    assert kv_bytes_per_token(arch, "auto") == 16_384  # model_facts.json derived figure


def test_granite_4_h_mamba_state() -> None:
    # granite-4.0-h-small layer_types: 4 attention, 36 mamba; Mamba-2 state per layer:
    # conv 3 × (128 × 64 + 2 × 1 × 128) + ssm 128 × 64 × 128, bf16 (config fields).
    arch = from_catalog("ibm-granite/granite-4.0-h-small").architecture
    assert arch.count(LayerKind.MAMBA) == 36
    state = next(layer for layer in arch.layers if layer.state)
    assert state.state_bytes(2) == (3 * (128 * 64 + 2 * 128) + 128 * 64 * 128) * 2


def test_hybrid_conversation_is_state_plus_attention() -> None:
    # Qwen3-Next: 12 full-attention layers × 2 KV heads × 256 × 2 × 2 B per token plus
    # 36 fixed Gated DeltaNet states (config fields; vLLM gated_delta_net_state_shape).
    arch = from_catalog("Qwen/Qwen3-Next-80B-A3B-Instruct").architecture
    state = (3 * (2 * 16 * 128 + 32 * 128) + 32 * 128 * 128) * 2
    assert conversation_bytes(arch, "auto", 1000) == 1000 * 24_576 + 36 * state


def test_jamba_period_and_offset() -> None:
    # transformers JambaConfig: attention at layer i when i % attn_layer_period ==
    # attn_layer_offset (8 and 4); other layers Mamba-1.
    config = {
        "model_type": "jamba", "num_hidden_layers": 32, "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 8, "attn_layer_period": 8,
        "attn_layer_offset": 4, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2,
    }  # fmt: skip
    arch = from_config(config)
    assert [i for i, layer in enumerate(arch.layers) if layer.kind is LayerKind.FULL] == [
        4, 12, 20, 28
    ]  # fmt: skip
    mamba = arch.layers[0]
    assert mamba.state_bytes(2) == (3 * 8192 + 8192 * 16) * 2


def test_falcon_h1_layers_hold_attention_and_state() -> None:
    arch = from_catalog("tiiuae/Falcon-H1-0.5B-Base").architecture
    assert all(layer.kind is LayerKind.FULL and layer.state for layer in arch.layers)


def test_gemma_4_style_global_layers_have_their_own_heads() -> None:
    config = {
        "model_type": "gemma4_text", "num_hidden_layers": 6, "hidden_size": 2048,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
        "num_global_key_value_heads": 1, "global_head_dim": 512, "sliding_window": 512,
        "sliding_window_pattern": 6,
    }  # fmt: skip
    arch = from_config(config)
    full = arch.layers[5]
    assert (full.kind, full.kv_heads, full.k_head_dim) == (LayerKind.FULL, 1, 512)
    assert arch.layers[0].kv_heads == 4


@pytest.mark.parametrize(
    ("repo_id", "fmt"),
    [
        ("Qwen/Qwen3-32B-FP8", "fp8"),  # quantization_config fp8, torch_dtype bfloat16
        ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8", "w8a8"),
        ("openai/gpt-oss-20b", "mxfp4"),
        ("Qwen/Qwen2.5-7B-Instruct-AWQ", "awq"),
        ("meta-llama/Llama-3.1-8B-Instruct", "bf16"),
    ],
)
def test_weight_format_from_quantization_config(repo_id: str, fmt: str) -> None:
    assert weight_format(_config(repo_id)) == fmt


@pytest.mark.parametrize(
    ("repo_id", "params"),
    [
        ("Qwen/Qwen3-8B", 8_190_735_360),  # model_facts.json total_params (safetensors)
        ("meta-llama/Llama-3.1-8B-Instruct", 8_030_261_248),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", 46_702_792_704),
        ("deepseek-ai/DeepSeek-V2-Lite-Chat", 15_706_484_224),
    ],
)
def test_param_count_from_config(repo_id: str, params: int) -> None:
    assert param_count(_config(repo_id)) == pytest.approx(params, rel=0.001)


def test_seed_weights_of_qwen3_32b_fp8() -> None:
    # Seed document: 32.0 GiB of weights for Qwen3-32B FP8.
    assert from_catalog("Qwen/Qwen3-32B-FP8").weights_bytes / 2**30 == pytest.approx(32.0, abs=0.1)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"num_hidden_layers": None}, "config.num_hidden_layers"),
        ({"num_attention_heads": 0}, "config.num_attention_heads"),
        ({"layer_types": ["full_attention"] * 35 + ["mystery_attention"]}, "config.layer_types"),
        ({"head_dim": None, "hidden_size": 4095}, "config.head_dim"),
        ({"kv_lora_rank": 512}, "config.qk_rope_head_dim"),
    ],
)
def test_bad_config_names_the_field(change: dict, field: str) -> None:
    config = {**_config("Qwen/Qwen3-8B"), **change}
    with pytest.raises(ConfigError) as err:
        from_config(config)
    assert err.value.field == field


def test_unknown_linear_attention_says_which_fields() -> None:
    config = {**_config("Qwen/Qwen3-8B"), "layer_types": ["linear_attention"] * 36}
    with pytest.raises(ConfigError, match="linear_num_key_heads"):
        from_config(config)


def test_an_fp8_checkpoint_keeps_embeddings_output_layer_and_vision_tower_at_16_bit() -> None:
    # Qwen/Qwen3-VL-4B-Instruct-FP8 has no published size; the Hub counts 4,826,993,728
    # elements in it (AlexsJones/llmfit llmfit-core/data/hf_models.json, parameters_raw,
    # commit a3e0eb2). Its tied embedding (151,936 × 2560) is stored twice (embed_tokens and
    # lm_head) and the vision tower whole, all at 16 bit; the decoder weights at 8 bit.
    from sizing.model.checkpoint import vision_tower_params

    model = from_catalog("Qwen/Qwen3-VL-4B-Instruct-FP8")
    sixteen = 2 * 151_936 * 2560 + vision_tower_params(model.config)
    values = model.weights_bytes - sixteen  # 8-bit values + 16-bit values
    assert values == pytest.approx(4_826_993_728, rel=0.001)
    # the BF16 sibling Qwen3-VL-4B-Instruct: 4.44 B parameters (text 4,022 M + vision)
    assert vision_tower_params(model.config) == pytest.approx(415e6, rel=0.01)
