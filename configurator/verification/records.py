"""Benchmark records in and out: bundled cases, uploaded files, calibrated predictions."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import transaction

from configurator.verification.comparison import gpu_class
from configurator.verification.models import BenchmarkRecord
from configurator.verification.parsers import ParsedBenchmark, ParseError, parse
from sizing.data_files import data_text

CASES_FILE = "ground_truth_cases.json"
"""The bundled cases (copied from the reference ground truth, each with its source)."""

SETTINGS_FIELDS = (
    "engine",
    "engine_version",
    "model_id",
    "gpu_type",
    "gpu_total_memory_gib",
    "gpu_count",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "gpu_memory_utilization",
    "mem_fraction_static",
    "max_model_len",
    "block_size",
    "kv_cache_dtype",
    "quantization",
    "dtype",
)
"""A record's settings known before the engine starts (what a prediction may read)."""

RECORD_FIELDS = (
    *SETTINGS_FIELDS,
    "max_num_batched_tokens",
    "weights_gib",
    "activation_peak_gib",
    "non_torch_gib",
    "cuda_graph_gib",
    "kv_cache_gib",
    "kv_cache_tokens",
    "num_gpu_blocks",
    "max_concurrency",
    "ttft_mean_ms",
    "ttft_median_ms",
    "ttft_p99_ms",
    "output_throughput_tok_s",
    "request_throughput_req_s",
)
TEXT_DEFAULTS = {"kv_cache_dtype": "auto", "quantization": "", "dtype": ""}
INT_DEFAULTS = {
    "gpu_count": 1,
    "tensor_parallel_size": 1,
    "pipeline_parallel_size": 1,
    "data_parallel_size": 1,
}


def _values(found: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in RECORD_FIELDS:
        value = found.get(name)
        if value is None:
            value = TEXT_DEFAULTS.get(name, INT_DEFAULTS.get(name))
        values[name] = value
    values["gpu_class"] = gpu_class(values["gpu_type"] or "")
    return values


def bundled_cases() -> list[dict[str, Any]]:
    """The bundled ground-truth cases (``sizing/data/ground_truth_cases.json``)."""
    text = data_text(CASES_FILE)
    cases: list[dict[str, Any]] = json.loads(text)["cases"]
    return cases


def case_source(case: dict[str, Any]) -> str:
    """The case's source as one line a reader can look up.

    A log in a repository: ``repo@commit path (kind)``; a published page: its title
    and address; notes known by their title only: the title in quotes and the kind.
    """
    src = case.get("source") or {}
    if not isinstance(src, dict):
        return str(src)
    where = ""
    if src.get("repo"):
        where = str(src["repo"])
        if src.get("commit"):
            where += f"@{str(src['commit'])[:7]}"
    elif src.get("title"):
        where = f"“{src['title']}”"
    parts = [where, str(src.get("path") or "")]
    if src.get("kind"):
        parts.append(f"({src['kind']})")
    if src.get("url"):
        parts.append(str(src["url"]))
    return " ".join(p for p in parts if p) or "bundled ground-truth case"


def case_digest(case: dict[str, Any]) -> str:
    """The content hash that keeps :func:`load_cases` idempotent."""
    return hashlib.sha256(json.dumps(case, sort_keys=True).encode()).hexdigest()


def load_cases(cases: list[dict[str, Any]]) -> int:
    """Store ``cases`` as records (idempotent by content hash); returns how many are new."""
    known = set(
        BenchmarkRecord.objects.filter(kind=BenchmarkRecord.Kind.GROUND_TRUTH).values_list(
            "content_hash", flat=True
        )
    )
    new = []
    for case in cases:
        digest = case_digest(case)
        if digest in known:
            continue
        known.add(digest)
        extra = {
            k: v
            for k, v in case.items()
            if k not in RECORD_FIELDS and k not in ("id", "source", "notes", "extra")
        }
        extra.update(case.get("extra") or {})
        new.append(
            BenchmarkRecord(
                kind=BenchmarkRecord.Kind.GROUND_TRUTH,
                case_id=str(case.get("id", "")),
                source=case_source(case),
                notes=str(case.get("notes") or ""),
                extra=extra,
                content_hash=digest,
                **_values(case),
            )
        )
    with transaction.atomic():
        BenchmarkRecord.objects.bulk_create(new, ignore_conflicts=True)
    return len(new)


def record_import_file(
    *,
    content: bytes,
    filename: str = "",
    fmt: str | None = None,
    gpu_type: str | None = None,
    engine_version: str | None = None,
    source: str = "",
) -> tuple[BenchmarkRecord, bool]:
    """Import one engine log or benchmark result; returns the record and whether it is new.

    The same bytes imported twice give the same record (content hash).

    Args:
        content: the file's bytes (UTF-8 text).
        filename: shown in errors and used as the source when none is given.
        fmt: ``vllm_log``, ``sglang_log`` or ``vllm_bench_json``; detected when ``None``.
        gpu_type: the GPU, when the file does not name it (vLLM logs never do).
        engine_version: the engine version, when the file does not name it.
        source: where the file comes from (burn-in run, repository, issue).

    Raises:
        configurator.verification.parsers.ParseError: naming what is missing; nothing
            is stored.
    """
    digest = hashlib.sha256(content).hexdigest()
    existing = BenchmarkRecord.objects.filter(content_hash=digest).first()
    if existing is not None:
        return existing, False
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError(f"{filename or 'the file'} is not UTF-8 text") from None
    overrides: dict[str, Any] = {"gpu_type": gpu_type, "engine_version": engine_version}
    parsed = _parse(text, fmt=fmt, overrides=overrides, filename=filename)
    values = _values(parsed.as_dict())
    with transaction.atomic():
        record, created = BenchmarkRecord.objects.get_or_create(
            content_hash=digest,
            defaults={
                "kind": parsed.kind,
                "source": source or filename or "uploaded file",
                "extra": {k: v for k, v in parsed.extra.items() if v is not None},
                **values,
            },
        )
    return record, created


def _parse(
    text: str, *, fmt: str | None, overrides: dict[str, Any], filename: str
) -> ParsedBenchmark:
    try:
        return parse(text, fmt=fmt, **{k: v for k, v in overrides.items() if v})
    except ParseError as exc:
        prefix = f"{filename}: " if filename else ""
        raise ParseError(prefix + exc.message, missing=exc.missing) from None
