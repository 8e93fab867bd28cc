"""Sizing and model-lookup errors on the configurator page, worded in the page language.

The engine keeps an English ``message`` for the CLI and JSON; the page words the error
in German (default) or English with the numbers formatted per language
(``configurator.inquiries.problems``): a workload limit by translating the engine's own
English template (so the English page shows the engine's sentence, capitalised), the
other errors by their ``code``. Expected numbers come from the engine's own
English message of the same case (asserted next to the German one), from
``sizing/data/models.json`` and ``sizing/data/hardware.json``, and from the limits in
``sizing/plan/orchestrator.py``.
"""

from __future__ import annotations

import ast
import dataclasses
import html as html_lib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import translation

from configurator.inquiries.problems import error_text, fix_text
from configurator.modelhub.errors import HubLookupPending, ModelLookupError
from configurator.modelhub.repo_ids import validate_repo_id
from configurator.modelhub.services import model_lookup
from configurator.modelhub.upload import model_from_config_upload
from configurator.planning.services import plan_create
from sizing.bom.lines import check_node
from sizing.errors import FIX_ENGLISH, Fix, SizingError, english
from sizing.hardware.catalog import platform
from sizing.hardware.chassis import PCIE_CHASSIS, ChassisLimitError, check_chassis
from sizing.model.architecture import kv_dtype_bytes, require_vocab_size
from sizing.model.config_reader import from_config
from sizing.model.spec import catalog_entry, from_catalog
from sizing.plan.orchestrator import make_plan
from sizing.summary import plan_summary
from sizing.traffic.profile import Traffic, validate_targets
from sizing.workload import Workload
from tests.factories import plan_request
from tests.hubserver.polling import post_until_answered
from tests.hubserver.server import RecordedHub

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
EN = {"Accept-Language": "en"}
DE = {"Accept-Language": "de"}


@pytest.fixture(autouse=True)
def _isolated(settings: Any) -> None:
    """No Hub lookups unless a test asks for the recorded Hub; fresh rate limits."""
    settings.HF_HUB_OFFLINE = True
    cache.clear()


def workload(**changes: Any) -> dict[str, Any]:
    """A small workload in the seed example's shape (docs/sizing.md)."""
    data: dict[str, Any] = {
        "model": "Qwen/Qwen3-32B-FP8",
        "context_tokens": 8192,
        "users": 100,
        "shared_prompt_tokens": 0,
        "kv_dtype": "fp8",
        "gpu": "rtx-pro-6000-se",
        "gpus_per_node": 4,
        "new_conversations_per_day": 0,
    }
    data.update(changes)
    return data


def text(fragment: str) -> str:
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment))).strip()


def problem(html: str) -> str:
    """The text of the estimate's problem box."""
    match = re.search(r'<div class="problem" role="alert">(.*?)</div>', html, re.S)
    assert match, "no problem box in the estimate"
    return text(match.group(1))


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<p id="id_{field}_error"[^>]*>([^<]*)</p>', html)
    assert match, f"no error slot for {field}"
    return html_lib.unescape(match.group(1))


def engine_error(**changes: Any) -> SizingError:
    """The error the engine raises for the workload (real plan_create, no page)."""
    with pytest.raises(SizingError) as caught:
        plan_create(Workload(**{**workload(), **changes}))
    return caught.value


def worded(exc: SizingError, language: str) -> str:
    with translation.override(language):
        return error_text(exc)


def test_405b_on_one_l4_is_german_with_translated_fixes_and_the_inputs(client: Client) -> None:
    data = workload(model="meta-llama/Llama-3.1-405B-Instruct", gpu="l4", gpus_per_node=1)
    german = client.post("/estimate/", data, headers={**HTMX, **DE}).content.decode()
    box = problem(german)
    # The engine's English message: "the weights (756.0 GiB) do not fit on 1 × NVIDIA L4:
    # 756.0 GiB per GPU at tensor parallel 1 against 17.2 GiB usable" (sizing/plan/layout_choice.py
    # rule
    # 0.9 × 22.5 GiB reported − 3 GiB overhead, hardware.json L4).
    assert "Die Gewichte (756,0 GiB) passen nicht auf 1 × NVIDIA L4" in box
    assert "nutzbar sind 17,2 GiB" in box
    assert "Abhilfe schafft eine Änderung bei: Modell, GPUs pro Knoten, GPU." in box
    assert "FP8-Gewichte (halb so viele Bytes)" in box
    assert "4-Bit-Gewichte (AWQ, GPTQ, NVFP4)" in box
    assert "eine GPU mit mehr Speicher" in box
    assert "do not fit" not in box and "half the bytes" not in box
    # The error sits at the binding input; each fix links the input it changes.
    assert "Die Gewichte" in field_error(german, "gpus_per_node")
    assert '<a href="#id_gpu">GPU</a>: eine GPU mit mehr Speicher' in german
    english = problem(client.post("/estimate/", data, headers={**HTMX, **EN}).content.decode())
    assert "The weights (756.0 GiB) do not fit on 1 × NVIDIA L4" in english
    assert "Inputs that would fix it: Model, GPUs per node, GPU." in english


def test_one_conversation_that_does_not_fit_names_a_shorter_context(client: Client) -> None:
    # Qwen3-8B (bf16, 15.3 GiB weights) on one L4 with 40,960 tokens: the engine says
    # "one conversation needs 2.81 GiB per GPU ... only 1.98 GiB per NVIDIA L4".
    exc = engine_error(model="Qwen/Qwen3-8B", gpu="l4", gpus_per_node=1, context_tokens=40960)
    assert exc.code == "conversation_does_not_fit" and "2.81 GiB" in exc.message
    data = workload(model="Qwen/Qwen3-8B", gpu="l4", gpus_per_node=1, context_tokens=40960)
    german = client.post("/estimate/", data, headers={**HTMX, **DE}).content.decode()
    box = problem(german)
    assert "Ein Gespräch braucht 2,81 GiB pro GPU" in box
    assert "nur 1,98 GiB für den KV-Cache" in box
    assert "ein Kontext von höchstens etwa" in box
    assert "Kontext pro Gespräch (Token)" in box.split("Abhilfe schafft")[1]
    assert field_error(german, "context_tokens").startswith("Ein Gespräch braucht 2,81 GiB")


@pytest.mark.parametrize(
    ("changes", "code", "german", "english"),
    [
        # sizing/plan/orchestrator.py MAX_CONTEXT_TOKENS = 10,000,000.
        (
            {"context_tokens": 0},
            "between",
            "Der Kontext (Token) muss zwischen 1 und 10.000.000 liegen, eingegeben: 0.",
            "The context (tokens) must be between 1 and 10,000,000, got 0.",
        ),
        # models.json: Qwen3-32B-FP8 max_position_embeddings 40,960.
        (
            {"context_tokens": 50_000},
            "context_above_model_limit",
            "Ein Kontext von 50.000 Token überschreitet die Grenze von Qwen/Qwen3-32B-FP8: "
            "40.960 Token",
            "Context of 50,000 tokens exceeds Qwen/Qwen3-32B-FP8's limit of 40,960 tokens",
        ),
        # sizing/plan/orchestrator.py MAX_USERS = 1,000,000.
        (
            {"users": 1_000_001},
            "between",
            "Die Anzahl Nutzer muss zwischen 1 und 1.000.000 liegen, eingegeben: 1.000.001.",
            "The number of users must be between 1 and 1,000,000, got 1,000,001.",
        ),
        # sizing/plan/orchestrator.py MAX_GPUS_PER_NODE = 16.
        (
            {"gpus_per_node": 17},
            "between",
            "Die Anzahl GPUs pro Knoten muss zwischen 1 und 16 liegen, eingegeben: 17.",
            "The number of GPUs per node must be between 1 and 16, got 17.",
        ),
        (
            {"gpu": "gtx-280"},
            "gpu_unknown",
            "Unbekannte GPU gtx-280; bekannte GPUs:",
            "Unknown GPU 'gtx-280'; known GPUs:",
        ),
        # Offline, an id outside the catalog: configurator.modelhub.services._fallback.
        (
            {"model": "nobody/no-such-model"},
            "unknown_model_offline",
            "Unbekanntes Modell nobody/no-such-model: Es ist weder im Offline-Katalog noch im "
            "Zwischenspeicher",
            "Unknown model 'nobody/no-such-model': it is neither in the offline catalog",
        ),
        (
            {"model": "not a model id"},
            "invalid_id",
            "not a model id ist keine Hugging-Face-Modell-ID der Form Besitzer/Name",
            "'not a model id' is not a Hugging Face model id of the form owner/name",
        ),
    ],
)
def test_engine_and_lookup_errors_are_worded_per_language(
    changes: dict[str, Any], code: str, german: str, english: str
) -> None:
    exc = engine_error(**changes)
    assert exc.code == code
    assert german in worded(exc, "de")
    assert english in worded(exc, "en")


# One input past each limit of Workload.validate (sizing/workload.py: MAX_CONTEXT_TOKENS,
# MAX_USERS, MAX_GPUS_PER_NODE, KV_DTYPES, SERVING_ENGINES, MAX_NEW_CONVERSATIONS_PER_DAY,
# active share in (0, 1], shared prompt below the 8,192-token context, TP at most the 4
# GPUs per node, MAX_HOST_MEMORY_GB from 1).
WORKLOAD_LIMITS = [
    {"context_tokens": 0},
    {"context_tokens": 50_000},
    {"users": 1_000_001},
    {"gpus_per_node": 17},
    {"kv_dtype": "int4"},
    {"serving_engine": "tgi"},
    {"new_conversations_per_day": -1},
    {"active_share": 0.0},
    {"shared_prompt_tokens": 8192},
    {"tensor_parallel_size": 8},
    {"max_host_memory_gb": 0},
]


def assert_worded_once(exc: SizingError) -> str:
    """``exc``'s English lives in its template only: the message (CLI, JSON API) is the
    template filled (an infeasible request may add its fixes), the English page the same
    sentence, the German page its translation. Returns the German."""
    # The page has no sentence of its own for the case: it translates the engine's template.
    assert exc.template
    clause = exc.template % english(dict(exc.values))
    assert exc.message == clause or exc.message.startswith(clause + ": ")
    # English: the engine's sentence, figures grouped alike, capitalised unless it opens
    # with a value or a name.
    assert worded(exc, "en") in {clause + ".", clause[:1].upper() + clause[1:] + "."}
    german = worded(exc, "de")
    assert german.endswith(".") and german != worded(exc, "en")
    return german


@pytest.mark.parametrize("changes", WORKLOAD_LIMITS)
def test_a_workload_limit_is_worded_in_english_once(changes: dict[str, Any]) -> None:
    with pytest.raises(SizingError) as caught:
        # Qwen3-32B-FP8: max_position_embeddings 40,960 (sizing/data/models.json).
        Workload(**{**workload(), **changes}).validate(model_limit_tokens=40_960)
    exc = caught.value
    assert exc.field == next(iter(changes))
    german = assert_worded_once(exc)
    assert "must" not in german and "got" not in german


# One traffic input past each limit of sizing/traffic/profile.py and
# sizing/serving/serve.py (8 turns by default, so 8,192 tokens give a turn 1,024; a TPOT
# target below the seed's floor of about 27 ms is sized as a miss, not refused), and a
# host memory limit below twice the 4 × 96 GB of GPU memory (sizing/memory/host_memory.py).
TRAFFIC_LIMITS = [
    ({"gap_profile": "weekly"}, "one_of", "eingegeben: 'weekly'."),
    (
        {"gap_median_s": 0, "gap_p90_s": 5},
        "above_at_most",
        "höchstens 604.800 liegen, eingegeben: 0.",
    ),
    ({"gap_median_s": 10, "gap_p90_s": 2.5}, "gap_p90_not_above_median", "(2,5 s)"),
    ({"turns": 2000}, "between", "zwischen 1 und 1.000 liegen, eingegeben: 2.000."),
    ({"new_prompt_tokens": 0}, "between", "Die Anzahl neuer Prompt-Token je Runde muss zwischen 1"),
    ({"output_tokens": -1}, "between", "Die Anzahl Ausgabe-Token je Runde muss zwischen 0"),
    ({"new_prompt_tokens": 100_000}, "conversation_exceeds_context", "802.744 Token"),
    ({"tpot_ms": -1}, "above_at_most", "Das TPOT-Ziel (ms) muss über 0 und höchstens 600.000"),
    ({"max_host_memory_gb": 100}, "host_memory_below_baseline", "unter den 768 GB"),
]


# Layouts that cannot be built (sizing/plan/layout_choice.py, sizing/memory/host_memory.py) and an
# unknown GPU
# (hardware.json): Qwen3-32B-FP8 has 64 attention and 8 KV heads (models.json), so TP 3
# does not divide them; Qwen3-8B at 40,960 tokens outgrows one L4; 405B of weights fit
# no L4; 20,000 seed conversations outgrow the 24 × 256 GB slots of one L40S node.
LAYOUT_LIMITS = [
    ({"tensor_parallel_size": 3}, "tp_invalid", "den 64 Attention-Heads und 8 KV-Heads"),
    (
        {"model": "Qwen/Qwen3-8B", "gpu": "l4", "gpus_per_node": 1, "context_tokens": 40960},
        "conversation_does_not_fit",
        "Ein Gespräch braucht 2,81 GiB pro GPU",
    ),
    (
        {"model": "meta-llama/Llama-3.1-405B-Instruct", "gpu": "l4", "gpus_per_node": 1},
        "weights_do_not_fit",
        "nutzbar sind 17,2 GiB",
    ),
    ({"gpu": "gtx-280"}, "gpu_unknown", "Unbekannte GPU gtx-280; bekannte GPUs: a100-pcie-40gb,"),
]


@pytest.mark.parametrize(("changes", "code", "german"), [*TRAFFIC_LIMITS, *LAYOUT_LIMITS])
def test_an_engine_limit_is_worded_in_english_once(
    changes: dict[str, Any], code: str, german: str
) -> None:
    exc = engine_error(**changes)
    assert exc.code == code
    assert german in assert_worded_once(exc)


# hardware.json: the RTX PRO 6000 Workstation Edition's flow-through cooler, the 4U
# chassis' 8 GPU slots and 24 DIMM slots, 4 NVMe bays; HGX H100 boards of 4 or 8 GPUs.
CHASSIS_LIMITS = [
    ({"gpu": "rtx-pro-6000-ws"}, "chassis_gpu_cooling", "Die GPU rtx-pro-6000-ws"),
    ({"gpus_per_node": 12}, "chassis_gpu_slots", "fasst höchstens 8 GPUs pro Knoten"),
    ({"gpu": "h100-sxm", "gpus_per_node": 2}, "baseboard_gpu_count", "Baseboards mit 4, 8 GPUs"),
]


@pytest.mark.parametrize(("changes", "code", "german"), CHASSIS_LIMITS)
def test_a_chassis_limit_is_worded_in_english_once(
    changes: dict[str, Any], code: str, german: str
) -> None:
    seed = {"context_tokens": 8192, "users": 50, "new_conversations_per_day": 0}
    plan = make_plan(plan_request(model=from_catalog("Qwen/Qwen3-32B-FP8"), **seed, **changes))
    with pytest.raises(ChassisLimitError) as caught:
        check_node(plan)
    assert caught.value.code == code
    assert german in assert_worded_once(caught.value)


def test_the_slots_of_a_chassis_are_worded_in_english_once() -> None:
    # hardware.json: the 4U chassis has 24 DIMM slots and 4 NVMe bays.
    for counts, german in (
        ({"dimm_count": 48, "nvme_drive_count": 0}, "hat aber 24 DIMM-Steckplätze"),
        ({"dimm_count": 24, "nvme_drive_count": 5}, "hat aber 4 NVMe-Einschübe"),
    ):
        with pytest.raises(ChassisLimitError) as caught:
            check_chassis(PCIE_CHASSIS, gpus=4, **counts)
        assert german in assert_worded_once(caught.value)


def test_an_unknown_platform_and_a_model_outside_the_catalog_are_german() -> None:
    with pytest.raises(SizingError) as caught:
        platform("epyc-1")
    assert assert_worded_once(caught.value) == "Unbekannte Serverplattform epyc-1."
    with pytest.raises(SizingError) as caught:
        from_catalog("nobody/nothing")
    assert (
        assert_worded_once(caught.value)
        == "Das Modell nobody/nothing ist nicht im Offline-Katalog."
    )


# Qwen3-8B's config.json (models.json: 36 layers, 32 attention and 8 KV heads, hidden
# 4,096) with one field changed, each refused by a config.json rule of sizing/
# (config_bounds.py, architecture_config.py, layer_kinds.py, recurrent.py); None drops the
# key.
GATED_DELTANET = {
    "layer_types": ["linear_attention"] * 36,
    "linear_num_key_heads": 16,
    "linear_key_head_dim": 128,
    "linear_num_value_heads": 32,
    "linear_value_head_dim": 128,
}
CONFIG_LIMITS = [
    ({"num_attention_heads": None}, "config_missing_field", "fehlt das Feld num_attention_heads"),
    (
        {"num_key_value_heads": 0},
        "config_not_positive_int",
        "positive ganze Zahl sein, gefunden: 0",
    ),
    ({"hidden_size": 1e300}, "config_out_of_range", "ist 1e+300, mehr als jedes reale Modell"),
    ({"hidden_size": 4096.5}, "config_not_whole_number", "ganze Zahl sein, gefunden: 4096.5"),
    (
        {"num_key_value_heads": 5},
        "config_kv_heads_indivisible",
        "(5) muss num_attention_heads (32)",
    ),
    (
        {"head_dim": None, "hidden_size": 4095},
        "config_head_dim_indivisible",
        "hidden_size 4.095 ist kein Vielfaches",
    ),
    ({"layer_types": ["full_attention"] * 3}, "config_layer_types_count", "nennt 3 Schichten"),
    ({"layer_types": ["weird"] * 36}, "config_layer_types_unknown", "kennt attention, chunked"),
    ({"hybrid_override_pattern": "MX"}, "config_pattern_unknown", "Schichtcodes X; bekannt"),
    ({"hybrid_layer_pattern": "x"}, "config_hybrid_layer_pattern", "jede der 36 Schichten"),
    ({"layer_types": ["linear_attention"] * 36}, "config_linear_kind_unknown", "Gated DeltaNet"),
    (GATED_DELTANET, "config_missing_state_field", "fehlt das Feld linear_conv_kernel_dim"),
    (
        {"layer_types": ["mamba"] * 36},
        "config_missing_state_field",
        "jedes der Felder ssm_state_size, mamba_d_state, state_size",
    ),
    (
        {"kv_lora_rank": 512, "qk_rope_head_dim": -1},
        "config_not_non_negative_int",
        "nicht negative ganze Zahl sein, gefunden: -1",
    ),
    ({"model_type": "nobody", "vocab_size": None}, "config_vocab_missing", "kein vocab_size"),
    ({"swa_layers": [1, 2]}, "config_layout_unread", "config.json setzt swa_layers"),
]


@pytest.mark.parametrize(("changes", "code", "german"), CONFIG_LIMITS)
def test_a_config_json_error_is_worded_in_english_once(
    changes: dict[str, Any], code: str, german: str
) -> None:
    config = {k: v for k, v in {**qwen3_8b_config(), **changes}.items() if v is not None}
    with pytest.raises(SizingError) as caught:
        require_vocab_size(from_config(config))
    assert caught.value.code == code
    assert german in assert_worded_once(caught.value)


def test_an_unknown_kv_dtype_of_the_architecture_is_german() -> None:
    # sizing/model/architecture.py: an "auto" cache of a model whose dtype has no byte size.
    arch = dataclasses.replace(from_config(qwen3_8b_config()), dtype="int3")
    with pytest.raises(SizingError) as caught:
        kv_dtype_bytes("auto", arch)
    exc = caught.value
    assert exc.message == "unknown KV-cache dtype 'auto'; use auto, bf16, fp16, fp32 or fp8"
    assert worded(exc, "de") == (
        "Der KV-Cache-Datentyp muss einer von auto, bf16, fp16, fp32, fp8 sein, eingegeben: auto."
    )


def test_a_host_memory_limit_below_the_smallest_layout_names_that_layout() -> None:
    # 4 × L4 of 24 GB (hardware.json) need 192 GB beside them, but the chassis's smallest
    # balanced layout is 24 channels × 16 GB = 384 GB (sizing/memory/host_memory.py): 383 GB
    # names the layout, not the baseline it is above.
    exc = engine_error(model="Qwen/Qwen3-8B", gpu="l4", gpus_per_node=4, max_host_memory_gb=383)
    assert (exc.field, exc.code) == ("max_host_memory_gb", "host_memory_below_smallest_layout")
    assert exc.message == (
        "383 GB of host memory per node is below the smallest balanced DIMM layout, 384 GB "
        "(one of the smallest DIMMs in every channel)"
    )
    assert "kleinsten ausgewogenen DIMM-Bestückung, 384 GB" in worded(exc, "de")


ROOT = Path(__file__).resolve().parents[2]
RAISERS = ("sizing", "configurator/modelhub")
"""The packages whose errors the page words (the engine and the model hub)."""


def error_templates() -> list[str]:
    """Every English error and fix template of :data:`RAISERS`: the string literals
    marked with ``gettext_noop``, read from the source as ``makemessages`` extracts them."""
    found = []
    for package in RAISERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "gettext_noop":
                    (argument,) = node.args
                    assert isinstance(argument, ast.Constant), f"{path}: not a literal"
                    found.append(argument.value)
    return sorted(set(found))


def placeholders(template: str) -> set[str]:
    return set(re.findall(r"%\((\w+)\)[sr]", template))


def test_the_templates_are_found() -> None:
    # sizing/inputs.py words every declared limit, sizing/errors.py each fix.
    templates = error_templates()
    assert "%(input)s must be between %(min)s and %(max)s, got %(got)s" in templates
    assert set(FIX_ENGLISH.values()) <= set(templates)


@pytest.mark.parametrize("template", error_templates(), ids=lambda t: t[:48])
def test_every_error_template_is_german(template: str) -> None:
    with translation.override("de"):
        german = translation.gettext(template)
    # a template of values and punctuation alone (``%(subject)s: %(detail)s``) may stay
    words = re.sub(r"%\(\w+\)[sr]", "", template)
    if re.search("[A-Za-z]", words):
        assert german != template, "no German translation (configurator/locale/de django.po)"
    assert placeholders(german) == placeholders(template)


def test_every_fix_is_worded_from_its_template() -> None:
    # sizing/plan/layout_choice.py names a context of at most about 23,552 tokens, grouped per
    # language.
    fix = Fix("context_at_most", (("tokens", 23_552),))
    assert fix.text == "a context of at most about 23,552 tokens"
    with translation.override("de"):
        assert fix_text(fix) == "ein Kontext von höchstens etwa 23.552 Token"
    with translation.override("en"):
        assert fix_text(fix) == fix.text


def test_an_error_without_a_template_keeps_its_english_message() -> None:
    exc = SizingError("users", "a new English sentence", code="not_worded_yet")
    assert worded(exc, "de") == "a new English sentence"


def test_lookup_errors_from_the_hub_are_german(client: Client, hub: RecordedHub) -> None:
    # tests/hubserver/recorded/meta-llama--Llama-3.1-8B.json is gated (manual).
    gated = post_until_answered(
        client, "/estimate/", workload(model="meta-llama/Llama-3.1-8B"), headers={**HTMX, **DE}
    )
    assert "meta-llama/Llama-3.1-8B ist zugangsbeschränkt" in field_error(
        gated.content.decode(), "model"
    )
    # tests/hubserver/recorded/hubtest--no-attention-heads.json lacks num_attention_heads.
    broken = post_until_answered(
        client, "/estimate/", workload(model="hubtest/no-attention-heads"), headers={**HTMX, **DE}
    )
    message = field_error(broken.content.decode(), "model")
    assert "keine Textgenerierungs-Architektur" in message
    assert "Der config.json fehlt das Feld num_attention_heads" in message


def config_upload(config: dict[str, Any] | None = None, raw: bytes | None = None) -> Any:
    content = raw if raw is not None else json.dumps(config).encode()
    return SimpleUploadedFile("config.json", content, content_type="application/json")


def upload(**changes: Any) -> dict[str, Any]:
    data = workload(model="")
    data.update(changes)
    return data


def qwen3_8b_config(**drop: None) -> dict[str, Any]:
    """Qwen3-8B's config.json from the offline catalog (sizing/data/models.json)."""
    entry = catalog_entry("Qwen/Qwen3-8B")
    assert entry is not None
    config = dict(entry["config"])
    for key in drop:
        config.pop(key, None)
    return config


@pytest.mark.parametrize(
    ("changes", "field", "german"),
    [
        (
            {"config_file": config_upload(raw=b'{"num_hidden_layers": 64,')},
            "config_file",
            "Die config.json ist kein gültiges JSON: Fehler in Zeile 1, Spalte 26",
        ),
        (
            {"config_file": config_upload([1, 2])},  # type: ignore[arg-type]
            "config_file",
            "Die config.json muss ein JSON-Objekt ({...}) enthalten.",
        ),
        (
            {"config_file": config_upload(qwen3_8b_config(num_attention_heads=None))},
            "config_file",
            "Der config.json fehlt das Feld num_attention_heads",
        ),
        # modelhub/upload.py MAX_WEIGHTS_GIB = 100,000.
        (
            {"config_file": config_upload(qwen3_8b_config()), "weights_gib": "0"},
            "weights_gib",
            "Die Gewichte müssen über 0 und höchstens 100.000 GiB betragen, eingegeben: 0.",
        ),
    ],
)
def test_upload_errors_are_german(
    client: Client, changes: dict[str, Any], field: str, german: str
) -> None:
    response = client.post("/estimate/", upload(**changes), headers=DE)
    assert response.status_code == 400
    assert german in field_error(response.content.decode(), field)


# configurator/modelhub/upload.py: MAX_CONFIG_BYTES 1,000,000, MAX_WEIGHTS_GIB 100,000,
# names of at most 200 characters; configurator/uploads.py: 64 levels of nesting and
# numbers of at most 100 characters, both worded in German with their figures.
UPLOAD_LIMITS = [
    ({"config_text": "x" * 1_000_001}, "upload_too_large", "größer als 1.000.000 Byte"),
    ({"config_text": '{"a": 1,'}, "upload_not_json", "Fehler in Zeile 1, Spalte 9"),
    ({"config_text": "[" * 70 + "]" * 70}, "upload_too_deep", "(tiefer als 64 Ebenen)."),
    (
        {"config_text": '{"a": ' + "9" * 500 + "}"},
        "upload_number_too_long",
        "(500 Zeichen, höchstens 100).",
    ),
    ({"config_text": "[1, 2]"}, "upload_not_object", "muss ein JSON-Objekt ({...})"),
    ({"model_name": "x" * 201}, "model_name_too_long", "höchstens 200 Zeichen"),
    (
        {"weights_gib": 0.0},
        "weights_range",
        "über 0 und höchstens 100.000 GiB betragen, eingegeben: 0.",
    ),
    (
        {"config_text": json.dumps(qwen3_8b_config(num_attention_heads=None))},
        "unsupported_architecture",
        "Das private Modell Qwen3ForCausalLM ist keine Textgenerierungs-Architektur",
    ),
]


@pytest.mark.parametrize(("changes", "code", "german"), UPLOAD_LIMITS)
def test_an_upload_error_is_worded_in_english_once(
    changes: dict[str, Any], code: str, german: str
) -> None:
    given = {"config_text": json.dumps(qwen3_8b_config()), "model_name": None, "weights_gib": None}
    with pytest.raises(ModelLookupError) as caught:
        model_from_config_upload(**{**given, **changes})
    assert caught.value.code == code
    assert german in assert_worded_once(caught.value)


def test_lookup_errors_of_the_id_and_a_pending_lookup_are_worded_in_english_once() -> None:
    with pytest.raises(ModelLookupError) as caught:
        validate_repo_id("not a model id")
    assert assert_worded_once(caught.value).startswith("not a model id ist keine Hugging-Face")
    with pytest.raises(ModelLookupError) as caught:
        model_lookup("Qwen/Qwen3-8B", revision="a..b")
    assert assert_worded_once(caught.value).startswith("a..b ist keine Revision")
    assert assert_worded_once(HubLookupPending("nobody/new")).startswith(
        "nobody/new wird gerade auf dem Hugging Face Hub nachgeschlagen"
    )


def test_an_unnamed_upload_is_not_called_private_twice(client: Client) -> None:
    config = qwen3_8b_config(num_hidden_layers=None, architectures=None, _name_or_path=None)
    with pytest.raises(ModelLookupError) as caught:
        model_from_config_upload(config_text=json.dumps(config), model_name=None, weights_gib=None)
    assert caught.value.message.startswith("the private model is not a text-generation")
    named = qwen3_8b_config(num_hidden_layers=None, _name_or_path=None)
    with pytest.raises(ModelLookupError) as caught:
        model_from_config_upload(config_text=json.dumps(named), model_name=None, weights_gib=None)
    assert caught.value.message.startswith("the private model Qwen3ForCausalLM is not")
    page = client.post("/estimate/", upload(config_file=config_upload(qwen3_8b_config())))
    html = text(page.content.decode())
    assert "Privates Modell Qwen3ForCausalLM: berechnet aus der hochgeladenen config.json" in html
    assert "private Qwen3ForCausalLM" not in html


def test_config_defaults_are_named_on_the_page_and_in_the_summary(client: Client) -> None:
    config = qwen3_8b_config(num_key_value_heads=None, head_dim=None)
    data = upload(config_file=config_upload(config), context_tokens=4096, kv_dtype="auto")
    german = text(client.post("/estimate/", data, headers=DE).content.decode())
    assert "Die config.json nennt kein num_key_value_heads: berechnet als Multi-Head-" in german
    assert "Die config.json nennt kein head_dim" in german
    data["config_file"] = config_upload(config)
    english = text(client.post("/estimate/", data, headers=EN).content.decode())
    assert (
        "config.json has no num_key_value_heads: sized as multi-head attention, one KV head "
        "per attention head (transformers' default)." in english
    )
    plan = plan_create(
        Workload(model="", context_tokens=4096, users=10, kv_dtype="auto"),
        model=model_from_config_upload(
            config_text=json.dumps(config), model_name=None, weights_gib=None
        ),
    )
    summary = plan_summary(plan)
    assert summary["assumptions"] == [
        "config.json has no num_key_value_heads: sized as multi-head attention, one KV head "
        "per attention head (transformers' default)",
        "config.json has no head_dim: sized with hidden_size / num_attention_heads "
        "(transformers' default)",
    ]
    # models.json Qwen3-8B: 36 layers, 32 attention heads, hidden 4096 → head_dim 128;
    # MHA: 2 × 36 × 32 × 128 × 2 B = 589,824 B per token, × 4,096 tokens = 2.25 GiB.
    assert summary["kv_bytes_per_token"] == 589_824
    assert summary["conversation_gib"] == 2.25


def test_a_complete_config_assumes_nothing(client: Client) -> None:
    data = upload(config_file=config_upload(qwen3_8b_config()))
    html = client.post("/estimate/", data, headers=DE).content.decode()
    # The config.json notice is absent; the traffic defaults' notice (its own class) may show.
    assert 'id="figure-gpus"' in html and 'class="notice assumptions"' not in html
    assert 'class="notice assumptions traffic-assumptions"' in html


@pytest.mark.parametrize(
    ("headers", "share", "quoted"),
    [(DE, "0", "eingegeben: 0."), (EN, "0", "got 0.")],
)
def test_a_refused_busy_hour_share_is_quoted_as_a_number_of_the_language(
    client: Client, headers: dict[str, str], share: str, quoted: str
) -> None:
    # sizing/traffic/profile.py: the share must be above 0 and at most 1; the error quotes what
    # was entered as a number of the reader's language (German: decimal comma).
    html = client.post(
        "/estimate/", workload(busy_hour_active_share=share), headers={**HTMX, **headers}
    ).content.decode()
    error = re.search(r'id="id_busy_hour_active_share_error"[^>]*>(.*?)</p>', html, re.S)
    assert error, "no error at the busy-hour share"
    assert quoted in error.group(1) and "0.0" not in error.group(1), error.group(1)


def test_a_busy_hour_share_above_one_is_quoted_with_a_decimal_comma_in_german() -> None:
    # The form stops 1.5 itself; the engine's own error (sizing/traffic/profile.py) quotes the
    # number for the language, as the CLI and API print it in English.
    with pytest.raises(SizingError) as caught:
        validate_targets(Traffic(busy_hour_active_share=1.5))
    with translation.override("de"):
        assert error_text(caught.value).endswith("eingegeben: 1,5.")
    with translation.override("en"):
        assert error_text(caught.value).endswith("got 1.5.")
