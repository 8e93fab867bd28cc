"""vLLM startup logs: V0 and V1 engines, INFO and DEBUG level, any worker prefix.

The lines read, with the vLLM code that prints them (reference ``vllm_memory_model.md``):

- version and settings: ``Initializing a V1 LLM engine (v0.19.0) with config: model=…,
  tensor_parallel_size=…`` (V0: ``Initializing an LLM engine (v0.6.4)``), the start-up
  banner ``version 0.19.0`` / ``model …``, ``vLLM API server version …``, ``non-default
  args: {…}`` and the older ``args: Namespace(…)``, ``Using max model len N``,
  ``Chunked prefill is enabled with max_num_batched_tokens=N``;
- weights: ``Model loading took X GiB [memory] and …`` (V1), ``Loading model weights took
  X GB`` (V0, where vLLM divided by 2^30);
- budget (V1, ``gpu_worker.py``): ``Available KV cache memory: X GiB``; DEBUG ``worker init
  memory snapshot: … total_memory=XGiB``; ``Free memory on device (F/T GiB) … Desired GPU
  memory utilization is (U, R GiB). Actual usage is W GiB for weight, A GiB for peak
  activation, N GiB for non-torch memory, and G GiB for CUDAGraph memory … Current kv cache
  memory in use is K GiB``; the 0.7-0.9 text ``total_gpu_memory (T GiB) x
  gpu_memory_utilization (U)`` / ``model weights take W GiB; non_torch_memory takes N GiB;
  PyTorch activation peak memory takes A GiB; the rest of the memory reserved for KV Cache is
  K GiB``;
- budget (V0 0.6, ``worker.py``): ``Memory profiling results: total_gpu_memory=TGiB …
  peak_torch_memory=PGiB … non_torch_memory=NGiB kv_cache_size=KGiB
  gpu_memory_utilization=U``;
- pool (``kv_cache_utils.py``): ``GPU KV cache size: N tokens``, ``Maximum concurrency for L
  tokens per request: Cx``; ``num_gpu_blocks is: N`` (V1 metrics) and ``# GPU blocks: N``
  (V0; ``# cuda blocks`` in 0.6); ``Graph capturing finished in S secs, took X GiB``.

With several workers each prints its own budget; vLLM sizes every worker to the smallest
(``get_kv_cache_configs``), so the smallest figure is kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from configurator.verification.parsers.base import (
    ParsedBenchmark,
    ParseError,
    positive,
    require,
    to_float,
    to_int,
)

ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
VERSION_RES = (
    re.compile(r"LLM engine \(v(\d[\w.+\-]{0,40})\) with config"),
    re.compile(r"vLLM API server version (\d[\w.+\-]{0,40})"),
    re.compile(r"█\s+version\s+(\d[\w.+\-]{0,40})"),
)
MODEL_RES = (
    re.compile(r"with config: model='([^']{1,200})'"),
    re.compile(r"█\s+model\s+(\S{1,200})"),
    re.compile(r"'model': '([^']{1,200})'"),
    re.compile(r"\bmodel='([^']{1,200})'"),
)
PAIR_RE = re.compile(r"'?(\w{1,60})'?\s*[=:]\s*('[^']{0,200}'|[^,\s(){}]{1,60})")
NUM = r"(-?[\d,]{1,20}(?:\.\d{1,10})?)"
GIB = NUM + r"\s?Gi?B"

Handler = Callable[[re.Match[str], dict[str, object]], None]


def _set(found: dict[str, object], key: str, value: object) -> None:
    if value is not None:
        found[key] = value


def _set_min(found: dict[str, object], key: str, value: float | int | None) -> None:
    if value is None:
        return
    old = found.get(key)
    found[key] = value if not isinstance(old, int | float) else min(old, value)


def _gib(text: str) -> float | None:
    return positive(to_float(text), limit=1e5)


def _settings(pairs: str, found: dict[str, object]) -> None:
    """Settings from ``key=value`` or ``'key': value`` pairs (engine config, args)."""
    for key, raw in PAIR_RE.findall(pairs):
        value = raw.strip("'")
        if key in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"):
            _set(found, key, to_int(value) or None)
        elif key in ("max_seq_len", "max_model_len"):
            _set(found, "max_model_len", to_int(value) or None)
        elif key in ("block_size", "max_num_batched_tokens"):
            _set(found, key, to_int(value) or None)
        elif key == "gpu_memory_utilization":
            util = to_float(value)
            _set(found, key, util if util is not None and 0 < util <= 1 else None)
        elif key in ("kv_cache_dtype", "quantization") and value and value != "None":
            found[key] = value
        elif key == "dtype" and value:
            found[key] = value.removeprefix("torch.")


def _on_config(m: re.Match[str], found: dict[str, object]) -> None:
    _settings(m.group(1), found)


def _on_free_memory(m: re.Match[str], found: dict[str, object]) -> None:
    _set(found, "gpu_total_memory_gib", _gib(m.group(1)))
    util = to_float(m.group(2))
    _set(found, "gpu_memory_utilization", util if util is not None and 0 < util <= 1 else None)
    _set(found, "weights_gib", _gib(m.group(3)))
    _set(found, "activation_peak_gib", to_float(m.group(4)))
    _set(found, "non_torch_gib", to_float(m.group(5)))
    _set(found, "cuda_graph_gib", to_float(m.group(6)))


def _on_v0_profile(m: re.Match[str], found: dict[str, object]) -> None:
    line = m.group(0)
    for key, target in (
        ("total_gpu_memory", "gpu_total_memory_gib"),
        ("non_torch_memory", "non_torch_gib"),
        ("peak_torch_memory", "_peak_torch_gib"),
    ):
        hit = re.search(key + r"=" + GIB, line)
        if hit:
            _set(found, target, to_float(hit.group(1)))
    hit = re.search(r"kv_cache_size=" + GIB, line)
    if hit:
        _set_min(found, "kv_cache_gib", to_float(hit.group(1)))
    hit = re.search(r"gpu_memory_utilization=([\d.]{1,10})", line)
    if hit:
        util = to_float(hit.group(1))
        _set(found, "gpu_memory_utilization", util if util and 0 < util <= 1 else None)


def _float_into(key: str, *, minimum: bool = False) -> Handler:
    def handle(m: re.Match[str], found: dict[str, object]) -> None:
        value = to_float(m.group(1))
        if minimum:
            _set_min(found, key, value)
        else:
            _set(found, key, value)

    return handle


def _int_into(key: str, *, minimum: bool = False) -> Handler:
    def handle(m: re.Match[str], found: dict[str, object]) -> None:
        value = to_int(m.group(1))
        if minimum:
            _set_min(found, key, value)
        else:
            _set(found, key, value)

    return handle


def _on_concurrency(m: re.Match[str], found: dict[str, object]) -> None:
    _set(found, "max_model_len", to_int(m.group(1)) or None)
    _set_min(found, "max_concurrency", to_float(m.group(2)))


def _on_total_util(m: re.Match[str], found: dict[str, object]) -> None:
    _set(found, "gpu_total_memory_gib", _gib(m.group(1)))
    util = to_float(m.group(2))
    _set(found, "gpu_memory_utilization", util if util is not None and 0 < util <= 1 else None)


def _on_split(m: re.Match[str], found: dict[str, object]) -> None:
    _set(found, "weights_gib", _gib(m.group(1)))
    _set(found, "non_torch_gib", to_float(m.group(2)))
    _set(found, "activation_peak_gib", to_float(m.group(3)))
    _set_min(found, "kv_cache_gib", to_float(m.group(4)))


RULES: tuple[tuple[str, re.Pattern[str], Handler], ...] = (
    ("with config:", re.compile(r"with config: (.*)"), _on_config),
    ("non-default args", re.compile(r"non-default args: \{(.*)\}"), _on_config),
    ("Namespace(", re.compile(r"args: Namespace\((.*)\)"), _on_config),
    ("max model len", re.compile(r"Using max model len " + NUM), _int_into("max_model_len")),
    (
        "max_num_batched_tokens=",
        re.compile(r"Chunked prefill is enabled with max_num_batched_tokens=" + NUM),
        _int_into("max_num_batched_tokens"),
    ),
    ("Model loading took", re.compile(r"Model loading took " + GIB), _float_into("weights_gib")),
    (
        "Loading model weights took",
        re.compile(r"Loading model weights took " + GIB),
        _float_into("weights_gib"),
    ),
    (
        "Available KV cache memory",
        re.compile(r"Available KV cache memory: " + GIB),
        _float_into("kv_cache_gib", minimum=True),
    ),
    (
        "Free memory on device",
        re.compile(
            r"Free memory on device \(" + NUM + r"/" + NUM + r" GiB\).*?"
            r"utilization is \("
            + NUM
            + r", "
            + NUM
            + r" GiB\)\. Actual usage is "
            + GIB
            + r" for weight, "
            + GIB
            + r" for peak activation, "
            + GIB
            + r" for non-torch memory, and "
            + GIB
            + r" for CUDAGraph"
        ),
        lambda m, f: _on_free_memory(_Regroup(m, (2, 3, 5, 6, 7, 8)), f),  # type: ignore[arg-type]
    ),
    (
        "kv cache memory in use",
        re.compile(r"Current kv cache memory in use is " + GIB),
        _float_into("kv_cache_gib", minimum=True),
    ),
    (
        "total_memory=",
        re.compile(r"memory snapshot:.*?total_memory=" + GIB),
        _float_into("gpu_total_memory_gib"),
    ),
    ("Memory profiling results", re.compile(r"Memory profiling results:.*"), _on_v0_profile),
    (
        "x gpu_memory_utilization",
        re.compile(r"total_gpu_memory \(" + GIB + r"\) x gpu_memory_utilization \(" + NUM),
        _on_total_util,
    ),
    (
        "model weights take",
        re.compile(
            r"model weights take "
            + GIB
            + r"; non_torch_memory takes "
            + GIB
            + r"; PyTorch activation peak memory takes "
            + GIB
            + r"; the rest of the memory reserved for KV Cache is "
            + GIB
        ),
        _on_split,
    ),
    (
        "GPU KV cache size",
        re.compile(r"GPU KV cache size: " + NUM + r" tokens"),
        _int_into("kv_cache_tokens", minimum=True),
    ),
    (
        "Maximum concurrency for",
        re.compile(r"Maximum concurrency for " + NUM + r" tokens per request: " + NUM + r"x"),
        _on_concurrency,
    ),
    (
        "num_gpu_blocks is",
        re.compile(r"num_gpu_blocks is: " + NUM),
        _int_into("num_gpu_blocks", minimum=True),
    ),
    (
        "blocks:",
        re.compile(r"# (?:GPU|cuda|CUDA) blocks: " + NUM),
        _int_into("num_gpu_blocks", minimum=True),
    ),
    (
        "Graph capturing finished",
        re.compile(r"Graph capturing finished in .*?took " + GIB),
        _float_into("cuda_graph_gib"),
    ),
    (
        "block size to",
        re.compile(r"Setting attention block size to " + NUM + r" tokens"),
        _int_into("block_size"),
    ),
)


class _Regroup:
    """A match whose groups are renumbered (the free-memory line has unused groups)."""

    def __init__(self, match: re.Match[str], groups: tuple[int, ...]) -> None:
        self._match = match
        self._groups = groups

    def group(self, index: int) -> str:
        return self._match.group(self._groups[index - 1])


def _first(patterns: tuple[re.Pattern[str], ...], text: str) -> str | None:
    for pattern in patterns:
        hit = pattern.search(text)
        if hit:
            return hit.group(1)
    return None


def scan(text: str) -> ParsedBenchmark:
    """Every figure the log holds, without checking that the required ones are there."""
    clean = ANSI_RE.sub("", text) if "\x1b" in text else text
    found: dict[str, object] = {}
    for line in clean.splitlines():
        for marker, pattern, handle in RULES:
            if marker in line:
                hit = pattern.search(line)
                if hit:
                    handle(hit, found)
    peak = found.pop("_peak_torch_gib", None)
    weights = found.get("weights_gib")
    if (
        isinstance(peak, float)
        and isinstance(weights, float)
        and "activation_peak_gib" not in found
    ):
        found["activation_peak_gib"] = round(peak - weights, 4)
    blocks, block = found.get("num_gpu_blocks"), found.get("block_size")
    if "kv_cache_tokens" not in found and isinstance(blocks, int) and isinstance(block, int):
        # V0 logs only the block count; its pool holds blocks × block_size tokens.
        found["kv_cache_tokens"] = blocks * block
    tp = found.get("tensor_parallel_size")
    pp = found.get("pipeline_parallel_size")
    dp = found.get("data_parallel_size")
    if isinstance(tp, int):
        found["gpu_count"] = (
            tp * (pp if isinstance(pp, int) else 1) * (dp if isinstance(dp, int) else 1)
        )
    return ParsedBenchmark(
        kind="vllm_log",
        engine="vllm",
        engine_version=_first(VERSION_RES, clean),
        model_id=_first(MODEL_RES, clean),
        **found,  # type: ignore[arg-type]
    )


def parse_vllm_log(text: str, **defaults: object) -> ParsedBenchmark:
    """Parse a vLLM startup log into a benchmark record.

    Args:
        text: the log, any level, any worker prefix, ANSI colours allowed.
        defaults: fields the log does not name (``gpu_type``) or that the caller
            corrects; applied before the required fields are checked.

    Returns:
        The figures, per GPU, GiB.

    Raises:
        ParseError: when the model, version, GPU or every KV-pool figure is missing
            (``missing`` names them).
    """
    record = scan(text).with_defaults(**defaults)
    if record.engine_version is None and record.model_id is None and record.kv_cache_gib is None:
        raise ParseError(
            "not a vLLM startup log: no engine version, model or KV-cache line found",
            missing=("engine_version", "model_id", "kv_cache_gib"),
        )
    if record.kv_cache_gib is None and (record.kv_cache_tokens or record.num_gpu_blocks):
        # vLLM before 0.6 logs only the block count; the pool in GiB is then unknown.
        required: tuple[str, ...] = ("engine_version", "model_id", "gpu_type")
    else:
        required = ("engine_version", "model_id", "gpu_type", "kv_cache_gib")
    return require(record, required, "vLLM startup log")
