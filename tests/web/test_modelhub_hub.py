"""Model lookup through the real ``huggingface_hub`` client against a recorded Hub.

Expected values come from the recorded responses in ``tests/hubserver/recorded/`` (each
file's ``_source`` says how it was built from ``sizing/data/models.json``) and from the
catalog itself.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from pytest_django import DjangoAssertNumQueries, Settings

from configurator.modelhub.errors import LookupFailure, ModelLookupError
from configurator.modelhub.models import HubModel
from configurator.modelhub.services import model_lookup, model_resolve
from sizing.model.architecture import kv_bytes_per_token
from sizing.model.spec import catalog_entry
from tests.hubserver.server import RECORDED, RecordedHub, serve

pytestmark = pytest.mark.django_db


def recorded(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((RECORDED / f"{name}.json").read_text("utf-8"))
    return doc


FP8 = recorded("Qwen--Qwen3-8B-FP8")
VL = recorded("Qwen--Qwen3-VL-4B-Instruct")
LLAMA = recorded("meta-llama--Llama-3.1-8B")
MISTRAL = recorded("mistralai--Mistral-7B-Instruct-v0.3")


def test_catalog_model_answers_without_contacting_the_hub(hub: RecordedHub) -> None:
    resolved = model_lookup("Qwen/Qwen3-32B-FP8")
    assert resolved.origin == "catalog"
    assert resolved.notice == ""
    # sizing/data/models.json: checkpoint_bytes of Qwen/Qwen3-32B-FP8 (seed: 34.3 GB).
    assert resolved.spec.weights_bytes == 34_300_000_000
    assert hub.requests == []


def test_fp8_derivative_resolves_from_the_hub_and_is_cached(hub: RecordedHub) -> None:
    resolved = model_lookup("Qwen/Qwen3-8B-FP8")
    spec = resolved.spec
    assert resolved.origin == "hub"
    # Recorded model_info: sha of main, cardData.license, gated false.
    assert resolved.sha == FP8["revisions"]["main"]
    assert resolved.license == "apache-2.0"
    assert resolved.gated == ""
    # Recorded config.json: quantization_config quant_method fp8, torch_dtype bfloat16.
    assert spec.weight_format == "fp8"
    # Recorded model.safetensors.index.json metadata.total_size.
    assert (
        spec.weights_bytes
        == FP8["files"]["model.safetensors.index.json"]["json"]["metadata"]["total_size"]
    )
    # Qwen3-8B config: 2 × 36 layers × 8 KV heads × 128 head_dim × 1 byte (FP8 cache).
    assert kv_bytes_per_token(spec.architecture, "fp8") == 2 * 36 * 8 * 128
    assert FP8["revisions"]["main"][:12] in spec.source
    assert hub.paths() == [
        "/api/models/Qwen/Qwen3-8B-FP8",
        f"/Qwen/Qwen3-8B-FP8/resolve/{resolved.sha}/config.json",
        f"/Qwen/Qwen3-8B-FP8/resolve/{resolved.sha}/config.json",
        f"/Qwen/Qwen3-8B-FP8/resolve/{resolved.sha}/model.safetensors.index.json",
        f"/Qwen/Qwen3-8B-FP8/resolve/{resolved.sha}/model.safetensors.index.json",
    ]
    row = HubModel.objects.get()
    assert (row.repo_id, row.revision, row.sha) == ("Qwen/Qwen3-8B-FP8", "", resolved.sha)


def test_repeat_lookup_makes_no_network_call_and_one_query(
    hub: RecordedHub, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    first = model_lookup("Qwen/Qwen3-8B-FP8")
    hub.requests.clear()
    with django_assert_num_queries(1):
        again = model_lookup("qwen/qwen3-8b-fp8")
    assert hub.requests == []
    assert again.origin == "cache"
    assert again.spec.weights_bytes == first.spec.weights_bytes
    assert again.sha == first.sha
    assert model_resolve("Qwen/Qwen3-8B-FP8", revision=first.sha).weights_bytes == (
        first.spec.weights_bytes
    )
    assert hub.requests == []


def test_multimodal_wrapper_is_sized_from_its_text_config(hub: RecordedHub) -> None:
    spec = model_resolve("Qwen/Qwen3-VL-4B-Instruct")
    text = VL["files"]["config.json"]["json"]["text_config"]
    # Recorded config.json text_config: 36 layers, hidden 2560, 8 KV heads × head_dim 128.
    assert spec.architecture.num_layers == text["num_hidden_layers"] == 36
    assert spec.architecture.hidden_size == 2560
    assert kv_bytes_per_token(spec.architecture, "auto") == 2 * 36 * 8 * 128 * 2
    assert spec.weight_format == "bf16"
    # The recorded index has no total_size: the two shards it names, each counted once.
    shard_sizes = {
        s["rfilename"]: s["size"]
        for s in VL["model_info"]["siblings"]
        if s["rfilename"].startswith("model-")
    }
    assert spec.weights_bytes == sum(shard_sizes.values()) == 4_967_215_360 + 3_908_420_240


def test_consolidated_copy_beside_the_shards_is_not_counted_twice(hub: RecordedHub) -> None:
    resolved = model_lookup("mistralai/Mistral-7B-Instruct-v0.3", revision="v0.3")
    assert resolved.origin == "hub"  # an explicit revision skips the catalog
    # Index metadata.total_size = the catalog's checkpoint_bytes (sizing/data/models.json).
    catalog = catalog_entry("mistralai/Mistral-7B-Instruct-v0.3")
    assert catalog is not None
    assert resolved.spec.weights_bytes == catalog["checkpoint_bytes"] == 14_496_047_104
    siblings = {s["rfilename"]: s["size"] for s in MISTRAL["model_info"]["siblings"]}
    everything = sum(size for name, size in siblings.items() if name.endswith(".safetensors"))
    assert everything > 2 * resolved.spec.weights_bytes * 0.99  # shards + consolidated copy
    assert HubModel.objects.get().revision == "v0.3"


def test_gated_repo_without_access_says_how_to_get_it(hub: RecordedHub) -> None:
    with pytest.raises(ModelLookupError) as caught:
        model_lookup("meta-llama/Llama-3.1-8B")
    assert caught.value.kind is LookupFailure.GATED
    assert caught.value.field == "model"
    message = str(caught.value)
    assert "gated" in message
    assert f"{hub.url}/meta-llama/Llama-3.1-8B" in message
    assert "HF_TOKEN" in message and "offline catalog" in message
    assert not HubModel.objects.exists()


def test_gated_repo_with_a_token_that_has_access(hub: RecordedHub, settings: Settings) -> None:
    settings.HF_TOKEN = LLAMA["requires_token"]
    resolved = model_lookup("meta-llama/Llama-3.1-8B")
    assert resolved.gated == "manual"  # recorded model_info.gated
    assert resolved.license == "llama3.1"  # recorded cardData.license
    # Recorded index total = catalog checkpoint_bytes of Llama-3.1-8B-Instruct.
    assert resolved.spec.weights_bytes == 16_060_522_496
    downloads = [auth for method, path, auth in hub.requests if "/resolve/" in path]
    assert downloads and set(downloads) == {f"Bearer {LLAMA['requires_token']}"}


def test_gated_repo_with_a_token_without_access(hub: RecordedHub, settings: Settings) -> None:
    settings.HF_TOKEN = "hf_token_of_another_account"
    with pytest.raises(ModelLookupError, match="configured HF_TOKEN has no access") as caught:
        model_lookup("meta-llama/Llama-3.1-8B")
    assert caught.value.kind is LookupFailure.GATED


@pytest.mark.parametrize(
    ("repo_id", "revision", "kind", "phrase"),
    [
        ("acme-labs/no-such-model", None, LookupFailure.NOT_FOUND, "was not found"),
        ("Qwen/Qwen3-8B-FP8", "v9.9", LookupFailure.REVISION_NOT_FOUND, "no revision 'v9.9'"),
        ("Qwen/Qwen3-8B-GGUF", None, LookupFailure.GGUF_ONLY, "only GGUF files"),
        (
            "sentence-transformers/all-MiniLM-L6-v2",
            None,
            LookupFailure.NOT_TEXT_GENERATION,
            "sentence-similarity model, not a text-generation model",
        ),
        ("hubtest/truncated-config", None, LookupFailure.MALFORMED_CONFIG, "not valid JSON"),
        (
            "hubtest/no-attention-heads",
            None,
            LookupFailure.UNSUPPORTED_ARCHITECTURE,
            "config.json has no num_attention_heads,",
        ),
    ],
)
def test_unusable_models_get_one_clear_sentence_and_nothing_is_stored(
    hub: RecordedHub, repo_id: str, revision: str | None, kind: LookupFailure, phrase: str
) -> None:
    with pytest.raises(ModelLookupError) as caught:
        model_lookup(repo_id, revision=revision)
    assert caught.value.kind is kind
    assert caught.value.field == "model"
    assert phrase in str(caught.value)
    assert "\n" not in str(caught.value)
    assert not HubModel.objects.exists()


@pytest.mark.parametrize("bad", ["Qwen3-8B", "a/b/c", "../etc/passwd", "owner/na me", "o/x-"])
def test_malformed_ids_are_rejected_before_any_request(hub: RecordedHub, bad: str) -> None:
    with pytest.raises(ModelLookupError, match="owner/name") as caught:
        model_lookup(bad)
    assert caught.value.kind is LookupFailure.INVALID_ID
    assert hub.requests == []


def test_stalled_hub_gives_up_and_falls_back_to_the_catalog(stalled_hub: RecordedHub) -> None:
    resolved = model_lookup("Qwen/Qwen3-32B-FP8", revision="main")
    assert resolved.origin == "catalog"
    assert "did not answer within 1 s" in resolved.notice
    assert "offline catalog" in resolved.notice
    assert stalled_hub.paths() == ["/api/models/Qwen/Qwen3-32B-FP8/revision/main"]


def test_stalled_hub_falls_back_to_an_earlier_cached_revision(
    stalled_hub: RecordedHub, settings: Settings
) -> None:
    with serve() as answering:
        settings.HF_ENDPOINT = answering.url
        first = model_lookup("Qwen/Qwen3-8B-FP8")
    settings.HF_ENDPOINT = stalled_hub.url
    resolved = model_lookup("Qwen/Qwen3-8B-FP8", revision="main")
    assert resolved.origin == "cache"
    assert resolved.sha == first.sha
    assert "did not answer within 1 s" in resolved.notice
    assert first.sha[:12] in resolved.notice
    assert HubModel.objects.count() == 1


def test_stalled_hub_and_no_other_source_is_a_clear_error(stalled_hub: RecordedHub) -> None:
    with pytest.raises(ModelLookupError) as caught:
        model_lookup("Qwen/Qwen3-8B-FP8")
    assert caught.value.kind is LookupFailure.UNREACHABLE
    assert "did not answer within 1 s" in str(caught.value)
    assert "catalog" in str(caught.value)
    assert not HubModel.objects.exists()


def test_refused_connection_falls_back_to_the_catalog(settings: Settings) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings.HF_ENDPOINT = f"http://127.0.0.1:{port}"
    settings.HF_HUB_OFFLINE = False
    resolved = model_lookup("Qwen/Qwen3-32B-FP8", revision="main")
    assert resolved.origin == "catalog"
    assert "could not be reached" in resolved.notice


def test_offline_mode_uses_catalog_and_cache_only(hub: RecordedHub, settings: Settings) -> None:
    cached = model_lookup("Qwen/Qwen3-8B-FP8")
    hub.requests.clear()
    settings.HF_HUB_OFFLINE = True
    assert model_lookup("Qwen/Qwen3-32B-FP8").origin == "catalog"
    assert model_lookup("Qwen/Qwen3-8B-FP8").origin == "cache"
    other_revision = model_lookup("Qwen/Qwen3-8B-FP8", revision="some-branch")
    assert other_revision.sha == cached.sha
    assert "HF_HUB_OFFLINE" in other_revision.notice
    with pytest.raises(ModelLookupError, match="HF_HUB_OFFLINE") as caught:
        model_lookup("Qwen/Qwen3-VL-4B-Instruct")
    assert caught.value.kind is LookupFailure.OFFLINE
    assert hub.requests == []


def test_size_command_sizes_a_hub_model(hub: RecordedHub, capsys: Any) -> None:
    call_command(
        "size",
        "--model",
        "Qwen/Qwen3-8B-FP8",
        "--context",
        "8192",
        "--users",
        "10",
        "--format",
        "json",
    )
    summary = json.loads(capsys.readouterr().out)["summary"]
    # Qwen3-8B: 2 × 36 × 8 × 128 × 1 byte (FP8 cache) per token.
    assert summary["kv_bytes_per_token"] == 73_728
    assert summary["model"] == "Qwen/Qwen3-8B-FP8"


def test_size_command_names_the_flag_for_a_missing_repo(hub: RecordedHub) -> None:
    with pytest.raises(CommandError) as caught:
        call_command(
            "size", "--model", "acme-labs/no-such-model", "--context", "8192", "--users", "10"
        )
    assert caught.value.returncode == 2
    assert str(caught.value).startswith("--model: acme-labs/no-such-model was not found")


def test_a_config_with_infinity_is_read_as_transformers_reads_it(hub: RecordedHub) -> None:
    # nvidia/Nemotron-H-56B-Base-8K's config.json holds "time_step_limit": [0.0, Infinity];
    # Python's json (transformers' reader) takes it. The cached row stores the constant by
    # name, which PostgreSQL's jsonb accepts where it refuses a bare Infinity.
    resolved = model_lookup("hubtest/infinity-config")
    assert resolved.origin == "hub"
    assert resolved.spec.architecture.num_layers == 52  # Nemotron-H-8B: 52 layers
    row = HubModel.objects.get(repo_id="hubtest/infinity-config")
    assert row.config["time_step_limit"] == [0.0, "Infinity"]
    cached = model_lookup("hubtest/infinity-config").spec  # from the row: sized the same
    assert cached.architecture == resolved.spec.architecture
    assert cached.weights_bytes == resolved.spec.weights_bytes == 16_200_000_000
