"""SGLang startup logs (reference ``vllm_memory_model.md`` §3, ``model_runner.py``).

Lines read: ``server_args=ServerArgs(model_path=…, mem_fraction_static=…, tp_size=…,
dp_size=…, kv_cache_dtype=…, page_size=…, context_length=…, chunked_prefill_size=…)``;
``Load weight begin. avail mem=X GB``; ``Load weight end. … avail mem=Y GB[, mem usage=W
GB]``; ``KV Cache is allocated. #tokens: N, K size: X GB, V size: Y GB`` (MLA: ``KV size:
X GB``); ``max_total_num_tokens=N, chunked_prefill_size=…, max_running_requests=…,
context_len=L``; a version from ``sglang==V``, ``sglang version V`` or ``SGLang vV``.
SGLang's "GB" is 2^30 bytes, so the figures are GiB.
"""

from __future__ import annotations

import re

from configurator.verification.parsers.base import (
    ParsedBenchmark,
    ParseError,
    positive,
    require,
    to_float,
    to_int,
)

NUM = r"([\d,]{1,20}(?:\.\d{1,10})?)"
ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
VERSION_RE = re.compile(r"sglang(?:==| version:? | v| )(\d+\.\d+[\w.+\-]{0,30})", re.IGNORECASE)
SERVER_ARGS_RE = re.compile(r"ServerArgs\((.*)\)")
PAIR_RE = re.compile(r"(\w{1,60})=('[^']{0,200}'|[^,\s()]{1,60})")
BEGIN_RE = re.compile(r"Load weight begin\. avail mem=" + NUM + r" ?GB")
END_RE = re.compile(r"Load weight end\..*?avail mem=" + NUM + r" ?GB(?:, mem usage=" + NUM + ")?")
KV_RE = re.compile(
    r"KV Cache is allocated\.(?: #tokens: "
    + NUM
    + r",)? (?:K size: "
    + NUM
    + r" ?GB, V size: "
    + NUM
    + r" ?GB|KV size: "
    + NUM
    + r" ?GB)"
)
TOTAL_RE = re.compile(r"max_total_num_tokens=" + NUM)
CONTEXT_RE = re.compile(r"context_len=" + NUM)
RUNNING_RE = re.compile(r"max_running_requests=" + NUM)


def _server_args(text: str, found: dict[str, object]) -> None:
    for key, raw in PAIR_RE.findall(text):
        value = raw.strip("'")
        if key == "model_path" and value:
            found["model_id"] = value
        elif key == "mem_fraction_static":
            mfs = to_float(value)
            if mfs is not None and 0 < mfs <= 1:
                found["mem_fraction_static"] = mfs
        elif key in ("tp_size", "pp_size", "dp_size"):
            size = to_int(value)
            target = {"tp_size": "tensor_parallel_size", "pp_size": "pipeline_parallel_size"}
            if size:
                found[target.get(key, "data_parallel_size")] = size
        elif key == "kv_cache_dtype" and value:
            found["kv_cache_dtype"] = value
        elif key == "page_size" and to_int(value):
            found["block_size"] = to_int(value)
        elif key == "context_length" and to_int(value):
            found["max_model_len"] = to_int(value)
        elif key == "chunked_prefill_size" and to_int(value):
            found["max_num_batched_tokens"] = to_int(value)
        elif key == "quantization" and value and value != "None":
            found["quantization"] = value
        elif key == "dtype" and value and value != "auto":
            found["dtype"] = value


def scan(text: str) -> ParsedBenchmark:
    """Every figure the log holds, without checking that the required ones are there."""
    clean = ANSI_RE.sub("", text) if "\x1b" in text else text
    found: dict[str, object] = {}
    extra: dict[str, object] = {}
    for line in clean.splitlines():
        if "ServerArgs(" in line and (hit := SERVER_ARGS_RE.search(line)):
            _server_args(hit.group(1), found)
        if "Load weight begin" in line and (hit := BEGIN_RE.search(line)):
            extra.setdefault("sglang_free_before_load_gb", to_float(hit.group(1)))
        if "Load weight end" in line and (hit := END_RE.search(line)):
            after = to_float(hit.group(1))
            extra["sglang_free_after_load_gb"] = after
            usage = to_float(hit.group(2)) if hit.group(2) else None
            before = extra.get("sglang_free_before_load_gb")
            if usage is None and isinstance(before, float) and after is not None:
                usage = round(before - after, 2)
            if positive(usage, limit=1e5):
                found["weights_gib"] = usage
        if "KV Cache is allocated" in line and (hit := KV_RE.search(line)):
            if hit.group(1):
                found.setdefault("kv_cache_tokens", to_int(hit.group(1)))
            if hit.group(4) is not None:
                kv = to_float(hit.group(4))
            else:
                k, v = to_float(hit.group(2)), to_float(hit.group(3))
                kv = round(k + v, 4) if k is not None and v is not None else None
            if positive(kv, limit=1e5):
                found["kv_cache_gib"] = kv
        if "max_total_num_tokens=" in line and (hit := TOTAL_RE.search(line)):
            found["kv_cache_tokens"] = to_int(hit.group(1))
            if ctx := CONTEXT_RE.search(line):
                found["max_model_len"] = to_int(ctx.group(1))
            if running := RUNNING_RE.search(line):
                extra["max_running_requests"] = to_int(running.group(1))
    tp = found.get("tensor_parallel_size")
    if isinstance(tp, int):
        dp = found.get("data_parallel_size")
        found["gpu_count"] = tp * (dp if isinstance(dp, int) else 1)
    version = VERSION_RE.search(clean)
    return ParsedBenchmark(
        kind="sglang_log",
        engine="sglang",
        engine_version=version.group(1) if version else None,
        extra=extra,
        **{k: v for k, v in found.items() if v is not None},  # type: ignore[arg-type]
    )


def parse_sglang_log(text: str, **defaults: object) -> ParsedBenchmark:
    """Parse an SGLang startup log into a benchmark record.

    Args:
        text: the log.
        defaults: fields the log does not name (``gpu_type``, often ``engine_version``).

    Returns:
        The figures, per GPU, GiB.

    Raises:
        ParseError: when the model, version, GPU or the KV pool is missing.
    """
    record = scan(text).with_defaults(**defaults)
    if record.model_id is None and record.kv_cache_tokens is None:
        raise ParseError(
            "not an SGLang startup log: no server arguments and no KV-cache line found",
            missing=("model_id", "kv_cache_gib"),
        )
    return require(
        record, ("engine_version", "model_id", "gpu_type", "kv_cache_gib"), "SGLang startup log"
    )
