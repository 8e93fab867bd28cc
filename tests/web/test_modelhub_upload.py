"""Private models: a config.json upload (service and ``size --config``), same rules as the Hub."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from configurator.modelhub.errors import LookupFailure, ModelLookupError
from configurator.modelhub.upload import MAX_CONFIG_BYTES, model_from_config_upload
from configurator.planning.services import plan_create
from sizing.model.spec import catalog_entry
from sizing.summary import plan_summary
from sizing.units import GIB
from sizing.workload import SEED_WORKLOAD

ROOT = Path(__file__).resolve().parents[2]


def published_config(repo_id: str) -> dict[str, Any]:
    """A published config.json as bundled in sizing/data/models.json."""
    entry = catalog_entry(repo_id)
    assert entry is not None
    return dict(entry["config"])


def test_uploaded_config_reproduces_the_seed_example() -> None:
    spec = model_from_config_upload(
        config_text=json.dumps(published_config("Qwen/Qwen3-32B-FP8")),
        model_name="acme/qwen3-32b-support-ft",
        weights_gib=32.0,  # seed: Qwen3-32B FP8 weights 32.0 GiB
    )
    assert spec.repo_id == "acme/qwen3-32b-support-ft"
    assert spec.weights_bytes == 32 * GIB
    assert spec.source == "uploaded config.json"
    summary = plan_summary(plan_create(SEED_WORKLOAD.replace(model=spec.repo_id), model=spec))
    # Seed worked example (docs/sizing.md-3.3): 128 KiB per token, 1 GiB per 8K conversation,
    # 51 conversations per card, 24 × 48 GB DIMMs.
    assert summary["kv_bytes_per_token"] == 131_072
    assert summary["conversation_gib"] == 1.0
    assert summary["conversations_per_gpu"] == 51
    assert (summary["dimm_count"], summary["dimm_gb"]) == (24, 48)


def test_weights_come_from_the_parameter_count_when_not_given() -> None:
    spec = model_from_config_upload(
        config_text=json.dumps(published_config("Qwen/Qwen3-8B")),
        model_name=None,
        weights_gib=None,
    )
    assert spec.repo_id == "private Qwen3ForCausalLM"  # the config's first architecture
    # sizing/data/models.json: Qwen/Qwen3-8B checkpoint_bytes (BF16 index total_size).
    published_bytes = 16_381_470_720
    assert spec.weights_bytes == pytest.approx(published_bytes, rel=0.01)


@pytest.mark.parametrize(
    ("text", "field", "phrase"),
    [
        (
            '{"model_type": "qwen3",',
            "config",
            "not valid JSON: error at line 1, column 24 (Expecting",
        ),
        ("[1, 2, 3]", "config", "must hold a JSON object"),
        ("x" * (MAX_CONFIG_BYTES + 1), "config", "larger than 1,000,000 bytes"),
        (
            '{"model_type": "llama", "hidden_size": 4096}',
            "config",
            "config.json has no num_hidden_layers,",
        ),
    ],
)
def test_bad_config_is_reported_at_the_config_field(text: str, field: str, phrase: str) -> None:
    with pytest.raises(ModelLookupError) as caught:
        model_from_config_upload(config_text=text, model_name="x", weights_gib=10.0)
    assert caught.value.field == field
    assert phrase in str(caught.value)


@pytest.mark.parametrize("weights_gib", [0.0, -1.0, float("nan"), float("inf"), 1e9])
def test_bad_weights_are_reported_at_the_weights_field(weights_gib: float) -> None:
    with pytest.raises(ModelLookupError) as caught:
        model_from_config_upload(
            config_text=json.dumps(published_config("Qwen/Qwen3-8B")),
            model_name=None,
            weights_gib=weights_gib,
        )
    assert caught.value.field == "weights_gib"
    assert caught.value.kind is LookupFailure.WEIGHTS_UNKNOWN


def test_overlong_model_name_is_refused() -> None:
    with pytest.raises(ModelLookupError) as caught:
        model_from_config_upload(
            config_text=json.dumps(published_config("Qwen/Qwen3-8B")),
            model_name="n" * 201,
            weights_gib=None,
        )
    assert caught.value.field == "model_name"


def run_size(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "size", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_size_command_with_config_file(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(published_config("Qwen/Qwen3-32B-FP8")), encoding="utf-8")
    done = run_size(
        "--config", str(config), "--model-name", "acme/private-32b", "--weights-gib", "32",
        "--context", "8192", "--users", "500", "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert summary["model"] == "acme/private-32b"
    assert summary["kv_bytes_per_token"] == 131_072  # seed: 128 KiB per token with FP8
    assert summary["weights_gib"] == 32.0  # as given


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--model", "Qwen/Qwen3-32B-FP8", "--config", "{path}"], "--model/--config"),
        ([], "--model/--config"),
        (["--model", "Qwen/Qwen3-32B-FP8", "--weights-gib", "3"], "--model-name/--weights-gib"),
        (["--config", "{missing}"], "--config: cannot read"),
        (["--config", "{bad}"], "--config: the config.json is not valid JSON"),
        # A device without end is read only up to the 1 MB limit (docs/customer.md).
        (["--config", "/dev/zero"], "--config: /dev/zero is larger than 1,000,000 bytes"),
        (["--config", "{large}"], "is larger than 1,000,000 bytes"),
        (["--config", "{path}", "--weights-gib", "-1"], "--weights-gib"),
    ],
)
def test_size_command_bad_private_model_input_is_one_line_exit_2(
    tmp_path: Path, args: list[str], flag: str
) -> None:
    good = tmp_path / "config.json"
    good.write_text(json.dumps(published_config("Qwen/Qwen3-8B")), encoding="utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text('{"model_type": ', encoding="utf-8")
    large = tmp_path / "large.json"  # valid JSON, 1 byte over the 1 MB limit
    large.write_text('{"pad": "' + "x" * (1_000_001 - 11) + '"}', encoding="utf-8")
    paths = {
        "path": str(good),
        "missing": str(tmp_path / "nope.json"),
        "bad": str(bad),
        "large": str(large),
    }
    done = run_size(*[a.format(**paths) for a in args], "--context", "8192", "--users", "5")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert flag in lines[0]


def test_size_command_reads_a_config_with_infinity_as_transformers_does(tmp_path: Path) -> None:
    # nvidia/Nemotron-H-56B-Base-8K's published config.json holds
    # "time_step_limit": [0.0, Infinity], which Python's json (transformers' reader) takes.
    config = published_config("nvidia/Nemotron-H-56B-Base-8K")
    text = json.dumps(config)[:-1] + ', "time_step_limit": [0.0, Infinity]}'
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    done = run_size("--config", str(path), "--context", "8192", "--users", "5", "--format", "json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["summary"]
    plain = model_from_config_upload(
        config_text=json.dumps(config), model_name=None, weights_gib=None
    )
    assert summary["weights_gib"] == round(plain.weights_bytes / GIB, 2)
