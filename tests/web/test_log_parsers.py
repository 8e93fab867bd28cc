"""Log and benchmark-result parsers: every line variant, missing fields, no crash on any input.

Fixtures in ``tests/data/verification/`` are reduced engine logs; each expected figure
comes from the ground-truth case the log belongs to (``sizing/data/ground_truth_cases.json``).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from configurator.verification.parsers import (
    ParseError,
    detect_format,
    parse,
    parse_bench_json,
    parse_sglang_log,
    parse_vllm_log,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "verification"


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_vllm_v1_debug_log_gives_every_figure_of_case_013():
    # case-013: granite-3.1-2b on H100, vLLM 0.19.0, llm-d-planner DEBUG log.
    record = parse_vllm_log(read("vllm-0.19.0-debug-granite-3.1-2b-h100.log"), gpu_type="H100 80GB")
    assert record.engine == "vllm"
    assert record.engine_version == "0.19.0"
    assert record.model_id == "ibm-granite/granite-3.1-2b-instruct"
    assert record.gpu_total_memory_gib == 79.19
    assert record.gpu_memory_utilization == 0.95
    assert record.max_model_len == 8192
    assert record.max_num_batched_tokens == 8192
    assert (record.tensor_parallel_size, record.pipeline_parallel_size) == (1, 1)
    assert record.kv_cache_dtype == "auto"
    assert record.dtype == "bfloat16"
    assert record.weights_gib == 4.74
    assert record.activation_peak_gib == 0.75
    assert record.non_torch_gib == 0.46
    assert record.cuda_graph_gib == 0.84
    assert record.kv_cache_gib == 69.28
    assert record.kv_cache_tokens == 908_048
    assert record.num_gpu_blocks == 56_753
    assert record.max_concurrency == 110.85


def test_vllm_v0_log_reads_the_profiler_line_and_block_count_of_case_090():
    # case-090: Llama-3.1-8B on RTX 3090, vLLM ~0.6.4 V0 (vllm issue #10517).
    record = parse_vllm_log(
        read("vllm-0.6.4-v0-llama-3.1-8b-rtx3090.log"), gpu_type="RTX 3090 24GB"
    )
    assert record.engine_version == "0.6.4"
    assert record.model_id == "meta-llama/Llama-3.1-8B-Instruct"
    assert record.gpu_total_memory_gib == 23.58
    assert record.gpu_memory_utilization == 0.9
    assert record.weights_gib == 14.9888
    assert record.non_torch_gib == 0.35
    assert record.kv_cache_gib == 3.81
    assert record.num_gpu_blocks == 1952
    # case-090 kv_cache_tokens: blocks × block size 16.
    assert record.kv_cache_tokens == 31_232
    assert record.max_model_len == 20_000
    assert record.max_concurrency == 1.56
    # peak_torch_memory 17.06 − weights 14.9888 (case-090 notes).
    assert record.activation_peak_gib == pytest.approx(2.0712)


def test_vllm_07_to_09_sentence_form_and_worker_prefixes():
    # The 0.7-0.9 profiling text printed by gpu_worker.py (reference §1.2), two TP ranks;
    # the expected values are the ones written in the lines below.
    text = "\n".join(
        [
            "INFO 03-01 10:00:00 [core.py:58] Initializing a V1 LLM engine (v0.8.5) with "
            "config: model='meta-llama/Llama-3.1-8B-Instruct', dtype=torch.bfloat16, "
            "max_seq_len=8192, tensor_parallel_size=2, pipeline_parallel_size=1, "
            "kv_cache_dtype=fp8, quantization=None",
            "(VllmWorker rank=0 pid=11) INFO 03-01 10:00:20 [gpu_model_runner.py:1329] "
            "Model loading took 7.5 GiB and 3.1 seconds",
            "(VllmWorker rank=0 pid=11) INFO 03-01 10:00:30 [gpu_worker.py:227] the current "
            "vLLM instance can use total_gpu_memory (79.19GiB) x gpu_memory_utilization "
            "(0.95) = 75.23GiB",
            "(VllmWorker rank=0 pid=11) INFO model weights take 7.50GiB; non_torch_memory "
            "takes 2.10GiB; PyTorch activation peak memory takes 1.39GiB; the rest of the "
            "memory reserved for KV Cache is 64.24GiB.",
            "(VllmWorker rank=1 pid=12) INFO 03-01 10:00:30 [gpu_worker.py:227] model "
            "weights take 7.50GiB; non_torch_memory takes 2.12GiB; PyTorch activation peak "
            "memory takes 1.39GiB; the rest of the memory reserved for KV Cache is 64.22GiB.",
            "\x1b[1;36m(VllmWorker rank=0 pid=11)\x1b[0m INFO 03-01 10:00:31 "
            "[kv_cache_utils.py:634] GPU KV cache size: 4,209,664 tokens",
        ]
    )
    record = parse_vllm_log(text, gpu_type="H100 80GB")
    assert record.engine_version == "0.8.5"
    assert record.tensor_parallel_size == 2
    assert record.gpu_count == 2
    assert record.kv_cache_dtype == "fp8"
    assert record.gpu_memory_utilization == 0.95
    assert record.non_torch_gib == 2.12  # the last rank's line
    assert record.kv_cache_gib == 64.22  # the smallest rank wins (get_kv_cache_configs)
    assert record.kv_cache_tokens == 4_209_664


def test_vllm_log_without_the_gpu_names_the_missing_field():
    with pytest.raises(ParseError) as info:
        parse_vllm_log(read("vllm-0.19.0-debug-granite-3.1-2b-h100.log"))
    assert info.value.missing == ("gpu_type",)
    assert "gpu_type" in str(info.value)


def test_truncated_vllm_log_names_the_kv_figure_as_missing():
    # The first 8 lines end before the engine sized its KV cache.
    head = "\n".join(read("vllm-0.19.0-debug-granite-3.1-2b-h100.log").splitlines()[:8])
    with pytest.raises(ParseError) as info:
        parse_vllm_log(head, gpu_type="H100 80GB")
    assert info.value.missing == ("kv_cache_gib",)


def test_the_file_wins_over_a_default_version():
    record = parse_vllm_log(
        read("vllm-0.19.0-debug-granite-3.1-2b-h100.log"),
        gpu_type="H100 80GB",
        engine_version="0.1.0",
    )
    assert record.engine_version == "0.19.0"


def test_sglang_log_of_case_099():
    # case-099: SGLang docs quick start, Llama-3.1-8B, mem_fraction_static 0.88.
    record = parse_sglang_log(
        read("sglang-0.4.1-llama-3.1-8b.log"), gpu_type="H100 80GB", engine_version="0.4.1"
    )
    assert record.engine == "sglang"
    assert record.model_id == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    assert record.mem_fraction_static == 0.88
    assert record.tensor_parallel_size == 1
    assert record.kv_cache_tokens == 444_500
    assert record.kv_cache_gib == pytest.approx(54.26)  # K 27.13 + V 27.13
    assert record.weights_gib == pytest.approx(15.09)  # 78.81 − 63.72 avail mem
    assert record.max_model_len == 131_072
    assert record.extra["max_running_requests"] == 2049


def test_sglang_newer_line_with_token_count_and_mla_kv_size():
    # SGLang 0.4.9 prints the token count; MLA models print one "KV size" (reference §3).
    text = (
        "[2025-07-14 10:00:00] server_args=ServerArgs("
        "model_path='deepseek-ai/DeepSeek-V2-Lite-Chat', tp_size=2, mem_fraction_static=0.9)\n"
        "[2025-07-14 10:00:09 TP0] KV Cache is allocated. #tokens: 1200000, KV size: 40.5 GB\n"
        "sglang==0.4.9.post1\n"
    )
    record = parse_sglang_log(text, gpu_type="H100 80GB")
    assert record.engine_version == "0.4.9.post1"
    assert record.kv_cache_tokens == 1_200_000
    assert record.kv_cache_gib == 40.5
    assert record.gpu_count == 2


def test_sglang_log_without_version_says_so():
    with pytest.raises(ParseError) as info:
        parse_sglang_log(read("sglang-0.4.1-llama-3.1-8b.log"), gpu_type="H100 80GB")
    assert info.value.missing == ("engine_version",)


def test_bench_serve_json():
    # Values from the fixture file vllm-bench-serve-result.json.
    record = parse_bench_json(read("vllm-bench-serve-result.json"))
    assert record.kind == "vllm_bench_json"
    assert record.model_id == "meta-llama/Llama-3.1-8B-Instruct"
    assert record.gpu_type == "H100 80GB"
    assert record.engine_version == "0.31.0"
    assert record.ttft_mean_ms == 812.4
    assert record.ttft_median_ms == 790.2
    assert record.ttft_p99_ms == 1201.7
    assert record.output_throughput_tok_s == 613.9
    assert record.request_throughput_req_s == 4.796


def test_bench_json_without_figures_or_gpu():
    data = json.loads(read("vllm-bench-serve-result.json"))
    del data["gpu"]
    with pytest.raises(ParseError) as info:
        parse_bench_json(json.dumps(data))
    assert info.value.missing == ("gpu_type",)
    with pytest.raises(ParseError) as info:
        parse_bench_json(json.dumps({"model_id": "x/y", "gpu": "H100"}))
    assert "ttft_mean_ms" in info.value.missing
    with pytest.raises(ParseError):
        parse_bench_json("[1, 2]")


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("vllm-0.19.0-debug-granite-3.1-2b-h100.log", "vllm_log"),
        ("vllm-0.6.4-v0-llama-3.1-8b-rtx3090.log", "vllm_log"),
        ("sglang-0.4.1-llama-3.1-8b.log", "sglang_log"),
        ("vllm-bench-serve-result.json", "vllm_bench_json"),
    ],
)
def test_format_is_detected_from_the_content(name, fmt):
    assert detect_format(read(name)) == fmt


def test_unknown_text_is_no_format():
    with pytest.raises(ParseError) as info:
        parse("hello world\n")
    assert info.value.missing == ("format",)


LOG_WORDS = st.sampled_from(
    [
        "Available KV cache memory: ",
        "GPU KV cache size: ",
        "Maximum concurrency for ",
        " tokens per request: ",
        "Model loading took ",
        "Memory profiling results: total_gpu_memory=",
        "kv_cache_size=",
        "# GPU blocks: ",
        "with config: model='",
        "non-default args: {'max_model_len': ",
        "KV Cache is allocated. #tokens: ",
        "K size: ",
        "max_total_num_tokens=",
        "ServerArgs(model_path='",
        "Free memory on device (",
        "GiB",
        "GB",
        "x",
        ", ",
        "\n",
        "1e309",
        "-5",
        "99999999999999999999999",
        "0.95",
        "█ version ",
    ]
)
FUZZ_TEXT = st.lists(st.one_of(LOG_WORDS, st.text(max_size=12)), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(FUZZ_TEXT, st.sampled_from([None, "vllm_log", "sglang_log", "vllm_bench_json"]))
def test_parsers_never_crash(text, fmt):
    """Whatever the input, a parser returns a record or raises ParseError, nothing else."""
    try:
        record = parse(text, fmt=fmt, gpu_type="H100 80GB", engine_version="0.19.0")
    except ParseError as exc:
        assert exc.message
        return
    for value in (record.kv_cache_gib, record.weights_gib, record.max_concurrency):
        assert value is None or value == value  # never NaN


@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.floats() | st.text(max_size=8),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=20), inner, max_size=6)
        ),
        max_leaves=20,
    )
)
def test_bench_json_parser_never_crashes(data):
    with contextlib.suppress(ParseError):
        parse_bench_json(json.dumps(data))
