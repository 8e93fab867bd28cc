"""The parsed form of one benchmark file, the parse error, and number helpers."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any


class ParseError(ValueError):
    """The input cannot become a benchmark record.

    Attributes:
        missing: names of the fields the input lacks (empty when the input is not of
            the format at all).
    """

    def __init__(self, message: str, *, missing: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.missing = missing


@dataclass(frozen=True)
class ParsedBenchmark:
    """Figures found in one engine log or benchmark result. All memory is per GPU, GiB.

    SGLang prints "GB" for 2^30 bytes (reference ``vllm_memory_model.md`` §3), so its
    figures land in the ``*_gib`` fields unchanged.
    """

    kind: str
    engine: str
    engine_version: str | None = None
    model_id: str | None = None
    gpu_type: str | None = None
    gpu_count: int | None = None
    gpu_total_memory_gib: float | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    data_parallel_size: int | None = None
    gpu_memory_utilization: float | None = None
    mem_fraction_static: float | None = None
    max_model_len: int | None = None
    block_size: int | None = None
    kv_cache_dtype: str | None = None
    quantization: str | None = None
    dtype: str | None = None
    max_num_batched_tokens: int | None = None
    weights_gib: float | None = None
    activation_peak_gib: float | None = None
    non_torch_gib: float | None = None
    cuda_graph_gib: float | None = None
    kv_cache_gib: float | None = None
    kv_cache_tokens: int | None = None
    num_gpu_blocks: int | None = None
    max_concurrency: float | None = None
    ttft_mean_ms: float | None = None
    ttft_median_ms: float | None = None
    ttft_p99_ms: float | None = None
    output_throughput_tok_s: float | None = None
    request_throughput_req_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def with_defaults(self, **values: Any) -> ParsedBenchmark:
        """A copy with the given values filled in where the file had none.

        What the file says wins; ``None`` values are ignored.

        Raises:
            ParseError: for a name that is not a field.
        """
        known = {f.name for f in fields(self)}
        unknown = set(values) - known
        if unknown:
            raise ParseError(f"unknown field(s): {', '.join(sorted(unknown))}")
        missing = {k: v for k, v in values.items() if v is not None and getattr(self, k) is None}
        return replace(self, **missing)

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (``extra`` included)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def require(record: ParsedBenchmark, names: tuple[str, ...], what: str) -> ParsedBenchmark:
    """Return ``record`` if every field in ``names`` is set.

    Raises:
        ParseError: naming every missing field, with ``missing`` set.
    """
    missing = tuple(n for n in names if getattr(record, n) in (None, ""))
    if missing:
        raise ParseError(f"{what}: missing {', '.join(missing)}", missing=missing)
    return record


def to_float(text: str) -> float | None:
    """``text`` (thousands separators allowed) as a finite float, else ``None``."""
    try:
        value = float(text.replace(",", "").replace("_", ""))
    except (ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def to_int(text: str) -> int | None:
    """``text`` (thousands separators allowed) as a non-negative int below 2^53, else ``None``."""
    cleaned = text.replace(",", "").replace("_", "").strip()
    if not cleaned.isdigit() or len(cleaned) > 15:
        return None
    return int(cleaned)


def positive(value: float | None, *, limit: float = 1e7) -> float | None:
    """``value`` when it is in (0, ``limit``], else ``None`` (drops absurd readings)."""
    if value is None or not 0 < value <= limit:
        return None
    return value
