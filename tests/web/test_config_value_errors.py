"""A bad count in an uploaded config.json is that field's error on the page (English and
German) and one line with exit status 2 on ``manage.py size --config``: never the
unsupported-architecture sentence, never a number hundreds of digits long.

The upload is Qwen/Qwen3-32B-FP8's config as bundled in ``sizing/data/models.json``
(64 attention heads, 8 KV heads); the bounds are ``sizing/model/config_bounds.py``'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from tests.web.test_customer_upload import (
    DE,
    EN,
    SEED_CONFIG,
    config_file,
    field_error,
    workload,
)

pytestmark = pytest.mark.django_db

# The page's subject for this upload's name (configurator.inquiries.problems._subject).
ENGLISH_WRAPPER = "is not a text-generation architecture"
GERMAN_WRAPPER = "keine Textgenerierungs-Architektur"


@pytest.fixture(autouse=True)
def _offline(settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True


def upload(**changes: Any) -> Any:
    return config_file({**SEED_CONFIG, "architectures": ["LlamaForCausalLM"], **changes})


@pytest.mark.parametrize(
    ("changes", "english", "german"),
    [
        (
            {"num_key_value_heads": 0},
            "The config.json field num_key_value_heads must be a positive integer, got 0.",
            "Das config.json-Feld num_key_value_heads muss eine positive ganze Zahl sein, "
            "gefunden: 0.",
        ),
        (
            {"hidden_size": 1e300},
            "The config.json field hidden_size is 1e+300, more than any real model has "
            "(at most 131,072).",
            "Das Feld hidden_size der config.json ist 1e+300, mehr als jedes reale Modell hat "
            "(höchstens 131.072).",
        ),
        (
            {"num_hidden_layers": 1_000_000},
            "The config.json field num_hidden_layers is 1,000,000, more than any real model "
            "has (at most 1,024).",
            "Das Feld num_hidden_layers der config.json ist 1.000.000, mehr als jedes reale "
            "Modell hat (höchstens 1.024).",
        ),
        (
            {"hidden_size": 5120.5},
            "The config.json field hidden_size must be a whole number, got 5120.5.",
            "Das config.json-Feld hidden_size muss eine ganze Zahl sein, gefunden: 5120.5.",
        ),
        (
            {"num_hidden_layers": "32"},  # a text, not the missing key
            'The config.json field num_hidden_layers must be a whole number, got "32".',
            'Das config.json-Feld num_hidden_layers muss eine ganze Zahl sein, gefunden: "32".',
        ),
        (
            {"num_attention_heads": "x" * 5000},  # quoted, cut after 20 characters
            f'The config.json field num_attention_heads must be a whole number, got "{"x" * 20}…".',
            "Das config.json-Feld num_attention_heads muss eine ganze Zahl sein, gefunden: "
            f'"{"x" * 20}…".',
        ),
        (
            {"num_key_value_heads": 5},
            "The config.json field num_key_value_heads (5) must divide num_attention_heads "
            "(64): each KV head serves a whole group of attention heads.",
            "Das config.json-Feld num_key_value_heads (5) muss num_attention_heads (64) "
            "teilen: Jeder KV-Head bedient eine ganze Gruppe von Attention-Heads.",
        ),
    ],
)
def test_a_bad_count_is_the_config_fields_own_error(
    client: Client, changes: dict[str, Any], english: str, german: str
) -> None:
    for headers, expected, wrapper in (
        (EN, english, ENGLISH_WRAPPER),
        (DE, german, GERMAN_WRAPPER),
    ):
        response = client.post(
            "/estimate/", workload(config_file=upload(**changes)), headers=headers
        )
        html = response.content.decode()
        assert response.status_code == 400
        error = field_error(html, "config_file")
        assert error == expected
        assert wrapper not in html
        assert 'id="figure-gpus"' not in html


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        (
            {"num_key_value_heads": 0},
            "--config: the private model LlamaForCausalLM: the config.json field "
            "num_key_value_heads must be a positive integer, got 0",
        ),
        (
            {"hidden_size": 1e300},
            "--config: the private model LlamaForCausalLM: the config.json field hidden_size is "
            "1e+300, more than any real model has (at most 131,072)",
        ),
        (
            {"num_hidden_layers": "32"},
            "--config: the private model LlamaForCausalLM: the config.json field "
            'num_hidden_layers must be a whole number, got "32"',
        ),
    ],
)
def test_the_size_command_names_the_field_in_one_line_with_exit_2(
    tmp_path: Path, changes: dict[str, Any], line: str
) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({**SEED_CONFIG, "architectures": ["LlamaForCausalLM"], **changes}),
        encoding="utf-8",
    )
    with pytest.raises(CommandError) as caught:
        call_command("size", "--config", str(path), "--context", "8192", "--users", "5")
    assert caught.value.returncode == 2
    assert str(caught.value) == line
