"""The workload type: defaults, limits, JSON round trip and stored rows of earlier schemas.

Expected values: the seed example (docs/sizing.md: Qwen3-32B-FP8, 8,192 tokens, 500 users,
4 × RTX PRO 6000 SE, FP8 cache, 2,000 new conversations a day) and the limits declared
in sizing/workload.py.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from sizing.errors import SizingError
from sizing.traffic.profile import FIELDS as TRAFFIC_FIELDS
from sizing.workload import FIELDS, SEED_WORKLOAD, Workload, model_source, stored_inputs


def test_seed_workload_is_the_seed_example() -> None:
    assert (
        Workload(
            model="Qwen/Qwen3-32B-FP8",
            context_tokens=8192,
            users=500,
            gpu="rtx-pro-6000-se",
            gpus_per_node=4,
            kv_dtype="fp8",
            new_conversations_per_day=2000,
        )
        == SEED_WORKLOAD
    )
    # Not given in the seed: users take turns, no shared prompt, the plan picks TP, no EP.
    assert (SEED_WORKLOAD.active_share, SEED_WORKLOAD.shared_prompt_tokens) == (None, 0)
    assert (SEED_WORKLOAD.tensor_parallel_size, SEED_WORKLOAD.expert_parallel) == (None, False)


def test_every_field_has_a_description() -> None:
    assert all(f.metadata.get("help") for f in FIELDS.values())
    # Its own fields in declaration order, then the traffic inputs it takes from Traffic.
    own = [f.name for f in dataclasses.fields(Workload) if f.name not in TRAFFIC_FIELDS]
    assert list(FIELDS) == [*own, *TRAFFIC_FIELDS]


def test_json_round_trip_keeps_every_field() -> None:
    every = SEED_WORKLOAD.replace(
        active_share=0.25,
        shared_prompt_tokens=1024,
        tensor_parallel_size=2,
        expert_parallel=True,
        without_nvme_tier=True,
    )
    assert Workload.from_json(every.to_json()) == every
    assert set(every.to_json()) == set(FIELDS)


def test_a_row_stored_before_the_nvme_switch_keeps_its_nvme_tier() -> None:
    # A stored workload of the seed (2,000 new conversations a day) without the
    # without_nvme_tier key: its NVMe tier is sized for all 2,000.
    stored = {k: v for k, v in SEED_WORKLOAD.to_json().items() if k != "without_nvme_tier"}
    workload = Workload.from_json(stored)
    assert workload.without_nvme_tier is False
    assert workload.nvme_conversations_per_day == 2000
    assert workload.replace(without_nvme_tier=True).nvme_conversations_per_day == 0


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        # A quote alternative as stored before the workload type (model_id, gpu_slug).
        (
            {
                "model_id": "Qwen/Qwen3-32B-FP8",
                "context_tokens": 8192,
                "users": 500,
                "gpu_slug": "rtx-pro-6000-se",
                "gpus_per_node": 4,
                "kv_dtype": "fp8",
                "new_conversations_per_day": 2000,
                "active_share": 0.3,
                "shared_prompt_tokens": 2048,
            },
            SEED_WORKLOAD.replace(active_share=0.3, shared_prompt_tokens=2048),
        ),
        # An alternative of the first schema: no active share or prompt at all.
        (
            {"model_id": "Qwen/Qwen3-32B-FP8", "context_tokens": 8192, "users": 500},
            Workload(model="Qwen/Qwen3-32B-FP8", context_tokens=8192, users=500),
        ),
        # The inquiry columns' earlier names: a share in percent, the system prompt.
        (
            {
                "model": "Qwen/Qwen3-32B-FP8",
                "context": 8192,
                "users": 500,
                "active_share_percent": 30,
                "system_prompt_tokens": 512,
            },
            Workload(
                model="Qwen/Qwen3-32B-FP8",
                context_tokens=8192,
                users=500,
                active_share=0.3,
                shared_prompt_tokens=512,
            ),
        ),
    ],
)
def test_stored_rows_of_earlier_schemas_load(stored: dict[str, Any], expected: Workload) -> None:
    assert Workload.from_json(stored) == expected


def test_a_private_model_is_stored_beside_the_workload() -> None:
    config = {"architectures": ["Qwen3ForCausalLM"], "num_hidden_layers": 64}
    data = stored_inputs(SEED_WORKLOAD, private_config=config, private_weights_gib=32.0)
    assert Workload.from_json(data) == SEED_WORKLOAD
    assert model_source(data) == (config, 32.0)
    assert model_source(SEED_WORKLOAD.to_json()) == (None, None)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({**SEED_WORKLOAD.to_json(), "turns_per_day": 3}, "turns_per_day"),
        ({**SEED_WORKLOAD.to_json(), "gpu_slug": "h200-nvl"}, "gpu"),  # given twice
        ({"model": "Qwen/Qwen3-32B-FP8", "users": 500}, "context_tokens"),
    ],
)
def test_unreadable_json_names_the_field(data: dict[str, Any], field: str) -> None:
    with pytest.raises(SizingError) as err:
        Workload.from_json(data)
    assert err.value.field == field


@pytest.mark.parametrize(
    ("changes", "field", "code"),
    [
        ({"context_tokens": 0}, "context_tokens", "between"),
        ({"users": 1_000_001}, "users", "between"),
        ({"gpus_per_node": 17}, "gpus_per_node", "between"),
        ({"kv_dtype": "int4"}, "kv_dtype", "one_of"),
        ({"new_conversations_per_day": -1}, "new_conversations_per_day", "between"),
        ({"active_share": 0.0}, "active_share", "above_at_most"),
        ({"shared_prompt_tokens": 8192}, "shared_prompt_tokens", "shared_prompt_not_below_context"),
        ({"tensor_parallel_size": 8}, "tensor_parallel_size", "tensor_parallel_above_gpus"),
    ],
)
def test_validate_names_the_workload_field(changes: dict[str, Any], field: str, code: str) -> None:
    with pytest.raises(SizingError) as err:
        SEED_WORKLOAD.replace(**changes).validate()
    assert (err.value.field, err.value.code) == (field, code)
    assert err.value.field in FIELDS


def test_the_model_limit_is_checked_on_the_context() -> None:
    # Qwen3-32B: max_position_embeddings 40,960 (config.json).
    with pytest.raises(SizingError) as err:
        SEED_WORKLOAD.replace(context_tokens=50_000).validate(model_limit_tokens=40_960)
    assert err.value.field == "context_tokens"
    assert "limit of 40,960 tokens" in err.value.message
