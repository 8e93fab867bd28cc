"""Counts and sizes in a config.json are bounded before the engine builds anything.

Bounds: ``sizing/model/config_bounds.py`` (8 × the largest value in the bundled catalog,
``sizing/data/models.json``, rounded up to a power of two).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sizing.errors import ConfigError
from sizing.model.config_bounds import BOUNDS, check_config_bounds
from sizing.model.config_reader import from_config
from sizing.model.spec import spec_from_metadata

CATALOG = Path(__file__).resolve().parents[2] / "sizing" / "data" / "models.json"


def catalog_configs() -> dict[str, dict[str, Any]]:
    models = json.loads(CATALOG.read_text("utf-8"))["models"]
    return {repo_id: entry["config"] for repo_id, entry in models.items()}


def qwen3_8b() -> dict[str, Any]:
    return dict(catalog_configs()["Qwen/Qwen3-8B"])


def test_every_catalog_model_is_within_the_bounds() -> None:
    configs = catalog_configs()
    assert len(configs) >= 73  # the 73 the module docstring's rule was taken over, and newer
    for config in configs.values():
        check_config_bounds(config)


@pytest.mark.parametrize(
    ("key", "value", "bound"),
    [
        ("num_hidden_layers", 1_000_000, 1_024),  # the QA report's hostile config
        ("num_hidden_layers", 10**7, 1_024),
        ("num_attention_heads", 1_000_000, 2_048),
        ("vocab_size", 10**12, 2_097_152),
        ("max_position_embeddings", 10**12, 134_217_728),
        ("num_experts", 10**9, 4_096),
        ("num_some_new_count", 10**9, 1_048_576),  # any other num_* count
    ],
)
def test_a_count_beyond_real_models_is_refused_naming_the_key(
    key: str, value: int, bound: int
) -> None:
    config = {**qwen3_8b(), key: value}
    with pytest.raises(ConfigError) as caught:
        spec_from_metadata("hostile/config", config, checkpoint_bytes=None, source="test")
    error = caught.value
    assert error.field == f"config.{key}" and error.code == "config_out_of_range"
    assert dict(error.values) == {"key": key, "got": value, "max": bound}
    assert f"the config.json field {key} is {value:,}," in error.message


def test_the_text_config_of_a_multimodal_wrapper_is_bounded_too() -> None:
    wrapper = {"model_type": "llava", "text_config": {**qwen3_8b(), "num_hidden_layers": 5000}}
    with pytest.raises(ConfigError) as caught:
        from_config(wrapper)
    assert caught.value.field == "config.num_hidden_layers"


def test_a_per_layer_list_longer_than_any_model_is_refused() -> None:
    config = {**qwen3_8b(), "layer_types": ["full_attention"] * 5000}
    with pytest.raises(ConfigError) as caught:
        from_config(config)
    assert caught.value.field == "config.layer_types"
    assert dict(caught.value.values)["got"] == 5000


def test_the_largest_catalog_values_are_well_inside() -> None:
    # Llama 3.1 405B has 126 layers and 128 heads (sizing/data/models.json).
    llama = catalog_configs()["meta-llama/Llama-3.1-405B-Instruct"]
    assert llama["num_hidden_layers"] * 8 <= BOUNDS["num_hidden_layers"]
    assert llama["num_attention_heads"] * 8 <= BOUNDS["num_attention_heads"]
