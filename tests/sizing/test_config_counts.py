"""Zero, negative and fractional counts in a config.json, and KV heads that do not divide
the attention heads, are refused naming the key (``sizing/model/config_bounds.py``: transformers
and vLLM build no model from them); absurd values are echoed in a few characters.

The base config is Qwen/Qwen3-8B as bundled in ``sizing/data/models.json`` (32 attention
heads, 8 KV heads).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sizing.errors import ConfigError
from sizing.model.config_bounds import check_config_bounds, shown_value
from sizing.model.config_reader import from_config

CATALOG = Path(__file__).resolve().parents[2] / "sizing" / "data" / "models.json"
MODELS = json.loads(CATALOG.read_text("utf-8"))["models"]


def qwen3_8b(**changes: Any) -> dict[str, Any]:
    return {**MODELS["Qwen/Qwen3-8B"]["config"], **changes}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("num_key_value_heads", 0),  # was read as "unset" and sized as 32 KV heads (MHA)
        ("num_key_value_heads", -8),
        ("num_attention_heads", 0),
        ("num_hidden_layers", 0),
        ("num_hidden_layers", -1),
        ("head_dim", 0),
        ("head_dim", -128),
        ("hidden_size", 0),
        ("vocab_size", 0),
        ("num_experts", 0),
        ("num_experts_per_tok", -2),
    ],
)
def test_a_zero_or_negative_count_is_refused_naming_the_key(key: str, value: int) -> None:
    with pytest.raises(ConfigError) as caught:
        from_config(qwen3_8b(**{key: value}))
    error = caught.value
    assert error.field == f"config.{key}" and error.code == "config_not_positive_int"
    assert dict(error.values) == {"key": key, "got": value}
    assert f"the config.json field {key} must be a positive integer, got {value}" in error.message


def test_a_negative_context_limit_is_refused_and_zero_is_no_limit() -> None:
    # sizing/model/config_bounds.py NON_NEGATIVE: 0 (like a missing key) states no limit.
    with pytest.raises(ConfigError) as caught:
        from_config(qwen3_8b(max_position_embeddings=-5))
    error = caught.value
    assert error.field == "config.max_position_embeddings"
    assert error.code == "config_not_non_negative_int"
    assert error.message == (
        "the config.json field max_position_embeddings must be a non-negative integer, got -5"
    )
    assert from_config(qwen3_8b(max_position_embeddings=0)).max_context_tokens == 0


@pytest.mark.parametrize(("value", "shown"), [(True, "true"), (False, "false")])
def test_a_boolean_count_is_refused_as_not_whole(value: bool, shown: str) -> None:
    # JSON true/false is no count, though Python reads it as 1/0 (was: "has no num_hidden_layers").
    with pytest.raises(ConfigError) as caught:
        from_config(qwen3_8b(num_hidden_layers=value))
    error = caught.value
    assert error.field == "config.num_hidden_layers" and error.code == "config_not_whole_number"
    assert (
        error.message
        == f"the config.json field num_hidden_layers must be a whole number, got {shown}"
    )


def test_a_null_count_is_unset_not_zero() -> None:
    # transformers' default for a missing num_key_value_heads: one per attention head.
    arch = from_config(qwen3_8b(num_key_value_heads=None))
    assert arch.layers[0].kv_heads == 32


def test_head_dim_zero_is_allowed_where_mla_never_reads_it() -> None:
    # GLM-5.3-Flash's published text_config: kv_lora_rank 512 with head_dim 0.
    check_config_bounds(MODELS["zai-org/GLM-5.3-Flash"]["config"])
    check_config_bounds({"kv_lora_rank": 512, "head_dim": 0})


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [("hidden_size", 4096.5, "4096.5"), ("num_hidden_layers", 36.0, "36.0")],
)
def test_a_float_count_is_refused_as_not_whole(key: str, value: float, shown: str) -> None:
    with pytest.raises(ConfigError) as caught:
        from_config(qwen3_8b(**{key: value}))
    error = caught.value
    assert error.field == f"config.{key}" and error.code == "config_not_whole_number"
    assert dict(error.values) == {"key": key, "got": shown}
    assert error.message == f"the config.json field {key} must be a whole number, got {shown}"


@pytest.mark.parametrize(
    ("value", "shown"),
    [(1e300, "1e+300"), (float("inf"), "inf"), (10**40, "1e+40"), (10**400, "about 1e+400")],
)
def test_an_absurd_value_is_echoed_in_a_few_characters(value: Any, shown: str) -> None:
    with pytest.raises(ConfigError) as caught:
        check_config_bounds(qwen3_8b(hidden_size=value))
    error = caught.value
    assert error.code == "config_out_of_range"
    assert dict(error.values) == {"key": "hidden_size", "got": shown, "max": 131_072}
    assert error.message == (
        f"the config.json field hidden_size is {shown}, more than any real model has "
        "(at most 131,072)"
    )
    assert len(error.message) < 120


def test_shown_value_keeps_ordinary_integers_for_grouping() -> None:
    assert shown_value(1_000_000) == 1_000_000
    assert shown_value(10**15) == "1e+15"


def test_kv_heads_must_divide_the_attention_heads() -> None:
    with pytest.raises(ConfigError) as caught:
        from_config(qwen3_8b(num_key_value_heads=5))  # 32 heads: groups of 6.4
    error = caught.value
    assert error.field == "config.num_key_value_heads"
    assert error.code == "config_kv_heads_indivisible"
    assert dict(error.values) == {"heads": 32, "kv_heads": 5}


def test_every_catalog_model_passes_the_count_rules() -> None:
    for entry in MODELS.values():
        check_config_bounds(entry["config"])
