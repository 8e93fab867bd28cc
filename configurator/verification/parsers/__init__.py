"""Parsers for engine startup logs and benchmark results, free of Django.

Each parser takes the text of one file and returns a :class:`ParsedBenchmark` with the
figures it found; :func:`parse` picks the parser from the content. Parsers never raise
anything but :class:`ParseError` (a ``ValueError``), whatever the input: a property test
feeds them arbitrary text.

Formats and their sources:

- vLLM startup logs, V0 and V1 engines, INFO and DEBUG level (``vllm_log``): the log
  lines listed in ``docs/verification.md``, as printed by ``vllm/v1/worker/gpu_worker.py``,
  ``vllm/v1/core/kv_cache_utils.py`` and the V0 ``worker.py`` (reference
  ``vllm_memory_model.md`` §1-2).
- SGLang startup logs (``sglang_log``): ``model_runner.py`` and ``scheduler.py`` lines
  (reference §3).
- ``vllm bench serve --save-result`` JSON (``bench_json``): the result keys of
  ``vllm/benchmarks/serve.py``.
"""

from __future__ import annotations

from configurator.verification.parsers.base import ParsedBenchmark, ParseError
from configurator.verification.parsers.bench_json import parse_bench_json
from configurator.verification.parsers.sglang_log import parse_sglang_log
from configurator.verification.parsers.vllm_log import parse_vllm_log

__all__ = [
    "ParseError",
    "ParsedBenchmark",
    "detect_format",
    "parse",
    "parse_bench_json",
    "parse_sglang_log",
    "parse_vllm_log",
]

FORMATS = ("vllm_log", "sglang_log", "vllm_bench_json")
SGLANG_MARKERS = ("ServerArgs(", "KV Cache is allocated", "max_total_num_tokens=", "sglang")
VLLM_MARKERS = (
    "LLM engine (v",
    "Available KV cache memory",
    "GPU KV cache size",
    "GPU blocks:",
    "Memory profiling results",
    "vLLM API server",
)


def detect_format(text: str) -> str:
    """Which format ``text`` is in: one of :data:`FORMATS`.

    Raises:
        ParseError: when the text is none of them.
    """
    head = text.lstrip()[:1]
    if head == "{":
        return "vllm_bench_json"
    sglang = any(marker in text for marker in SGLANG_MARKERS)
    vllm = any(marker in text for marker in VLLM_MARKERS)
    if sglang and not vllm:
        return "sglang_log"
    if vllm or "vllm" in text.lower():
        return "vllm_log"
    raise ParseError(
        "the file is neither a vLLM or SGLang startup log nor `vllm bench serve` result JSON",
        missing=("format",),
    )


def parse(text: str, *, fmt: str | None = None, **defaults: object) -> ParsedBenchmark:
    """Parse ``text`` as ``fmt`` (detected from the content when ``None``).

    Args:
        text: the whole file, decoded.
        fmt: one of :data:`FORMATS`, or ``None`` to detect.
        defaults: fields the file does not hold (``gpu_type``…), set before the
            required fields are checked.

    Raises:
        ParseError: unknown format, or required figures missing (named in ``missing``).
    """
    kind = fmt or detect_format(text)
    if kind == "vllm_log":
        return parse_vllm_log(text, **defaults)
    if kind == "sglang_log":
        return parse_sglang_log(text, **defaults)
    if kind == "vllm_bench_json":
        return parse_bench_json(text, **defaults)
    raise ParseError(f"unknown format {kind!r}; expected one of {', '.join(FORMATS)}")
