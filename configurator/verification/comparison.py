"""Which measurements are comparable to a plan, and how far the predictions are off.

Pure Python (no Django), so the CLI, the Celery task and the tests run the same rules
on records from the database or from the bundled cases.

Rules and their sources:

- Comparable records (issue 8): the same model, else the same architecture class
  (attention kind: full, sliding window, MLA, linear/hybrid) and weight size band; on
  the same GPU class; nearest engine version first (:data:`TARGET_VLLM_VERSION`).
- Tolerances: vLLM's pool from bytes per token is exact to within 0.01 %; what moves is
  the non-KV side, by about 8 % between vLLM versions alone (Qwen3-14B on H100: 41.94 GiB
  on 0.15-0.16, 45.34 GiB on 0.17; reference ``vllm_memory_model.md`` §2.6-2.7). A check
  is *verified* within :data:`VERIFIED_WITHIN` (2 %) and *within tolerance* within
  :data:`TOLERANCE` (10 %); beyond that it *deviates*.
- The plan's per-GPU KV budget is compared with measured pools of the same model, GPU
  class and TP size, moved to the plan's utilization: vLLM's pool is
  ``total × utilization − non-KV`` and the non-KV terms do not depend on utilization
  (reference §1.2).
- A record of another model (the class fallback) tests the calibrated engine model on a
  neighbour, not this model: its tolerance is :data:`FALLBACK_TOLERANCE` (15 %, about
  four times the calibrated model's p90 |error| of 3.53 % over the bundled vLLM cases in
  ``docs/accuracy.md``, because a neighbour adds the difference between the two models;
  the held-out median is 1.66 %) and it is at best *within tolerance*, never *verified*.
- Reload against recompute: the vLLM team measured 2× to 22× lower TTFT when KV values
  are loaded from CPU memory, for Llama 3.1 8B on an H100 80 GB, depending on prompt size
  (vLLM blog, 8 January 2026, quoted in the sizing article). It counts toward the status
  only for that model on that GPU class; elsewhere it is informational
  (:mod:`configurator.verification.published`).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sizing.memory.calibrated.setup import KvPoolPrediction
    from sizing.model.spec import ModelSpec

VERIFIED_WITHIN = 0.02
TOLERANCE = 0.10
FALLBACK_TOLERANCE = 0.15

PREDICTED_QUANTITIES = (
    ("KV pool per GPU", "kv_cache_gib", "GiB", False),
    ("KV pool tokens", "kv_cache_tokens", "tokens", True),
    ("Maximum concurrency", "max_concurrency", "requests", True),
)
"""What a calibrated prediction is compared on: check title, field (the same name on the
record and the prediction), unit, and whether a zero prediction skips the check (a zero
KV pool is itself a finding; zero tokens or concurrency only mean "not predicted")."""
"""Tolerance of a check against another model of the same class (see the module docstring)."""
TARGET_VLLM_VERSION = "0.31.0"
"""The vLLM release the configurator's flags are written for (sizing article)."""
MAX_RECORDS = 6
"""At most this many records are compared per alternative (nearest version first)."""

STATUS_ORDER = ("verified", "within_tolerance", "deviates")
GPU_NAME_WIDTH = 60
"""GPU descriptions longer than this are shortened at a word boundary in check names."""
FALLBACK_NOTE_PATTERN = (
    r"another model of the same class"
    r"(?: \((?P<attention>.+?) attention, (?P<band>.+?) GiB of weights\))?"
    r": (?P<model>.+?); tolerance ±(?P<tolerance>\d+)%, at best within tolerance"
)
"""Matches what :func:`fallback_note` writes, so a page can reword it in its language."""

GPU_CLASS_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"rtx\s*pro\s*6000|96\s*gb-class|97,?887\s*mib", "rtx-pro-6000"),
    (r"h200", "h200"),
    (r"h100\s*nvl|94\s*gb", "h100-nvl"),
    (r"h100|80\s*gb\s*gpu \(79\.2|80\s*gb-class", "h100"),
    (r"a100.*40\s*gb|a100-\w*-40gb", "a100-40gb"),
    (r"a100", "a100-80gb"),
    (r"l40s", "l40s"),
    (r"\bl4\b", "l4"),
    (r"b200", "b200"),
    (r"b300|gb300", "b300"),
    (r"(rtx[\s-]*)?4090", "rtx-4090"),
    (r"(rtx[\s-]*)?5090", "rtx-5090"),
    (r"(rtx[\s-]*)?3090", "rtx-3090"),
    (r"mi3\d\dx", "mi300"),
)


def gpu_class(text: str) -> str:
    """The GPU class of a GPU name, slug or log description (``h100``, ``rtx-pro-6000``).

    Cards of one class have the same memory and architecture, so their KV pools are
    comparable (SXM and PCIe H100 differ by 0.08 GiB of reported memory). Unknown text
    falls back to ``other-<N>gb`` from the first memory size in it, else ``other``.
    """
    lowered = text.lower()
    for pattern, name in GPU_CLASS_PATTERNS:
        if re.search(pattern, lowered):
            return name
    size = re.search(r"(\d{2,3})\s*gb", lowered)
    return f"other-{size.group(1)}gb" if size else "other"


def version_key(text: str) -> tuple[int, ...]:
    """The first dotted version number in ``text`` as integers (``~0.6.4 (V0)`` → 0,6,4)."""
    hit = re.search(r"\d+(?:\.\d+)*", text or "")
    return tuple(int(part) for part in hit.group(0).split(".")[:3]) if hit else ()


def version_distance(a: str, b: str) -> float:
    """How far apart two versions are (minor releases count 1, majors 100)."""
    ka, kb = (*version_key(a), 0, 0, 0), (*version_key(b), 0, 0, 0)
    if not version_key(a) or not version_key(b):
        return 1e6
    return abs((ka[0] - kb[0]) * 100 + (ka[1] - kb[1]) + (ka[2] - kb[2]) / 100)


class RecordLike(Protocol):
    """The fields of a benchmark record the comparison reads."""

    @property
    def pk(self) -> object:
        """The stored record's key (``None`` before it is stored)."""

    engine: str
    engine_version: str
    model_id: str
    gpu_type: str
    gpu_class: str
    gpu_total_memory_gib: float | None
    tensor_parallel_size: int
    pipeline_parallel_size: int
    data_parallel_size: int
    gpu_memory_utilization: float | None
    mem_fraction_static: float | None
    max_model_len: int | None
    block_size: int | None
    kv_cache_dtype: str
    dtype: str
    quantization: str
    max_num_batched_tokens: int | None
    kv_cache_gib: float | None
    kv_cache_tokens: int | None
    max_concurrency: float | None
    case_id: str
    source: str


@dataclass(frozen=True)
class ModelClass:
    """What makes two models comparable for KV-pool sizing."""

    attention: str
    size_band: str


@dataclass(frozen=True)
class CheckResult:
    """One prediction compared with one measurement.

    ``deviation`` is relative, ``(predicted − measured) / measured``; ``tolerance`` is
    the relative limit of *within tolerance*.
    """

    name: str
    quantity: str
    unit: str
    predicted: float
    measured: float
    deviation: float
    tolerance: float
    status: str
    source: str
    record: RecordLike | None = None
    alternative: str = ""
    counted: bool = True
    """Whether the check sets the overall status; informational checks do not."""
    note: str = ""
    """Why the check is not counted, or on what weaker basis it counts."""

    @property
    def deviation_percent(self) -> float:
        """The relative deviation in percent."""
        return self.deviation * 100


def size_band(weights_gib: float) -> str:
    """A weight-size band in GiB: <5, 5-20, 20-50, 50-100, 100-200, 200+."""
    for limit, name in ((5, "<5"), (20, "5-20"), (50, "20-50"), (100, "50-100"), (200, "100-200")):
        if weights_gib < limit:
            return name
    return "200+"


def model_class(spec: ModelSpec) -> ModelClass:
    """Attention kind and size band of a :class:`sizing.model.spec.ModelSpec`."""
    arch = spec.architecture
    kinds = {layer.kind.name.lower() for layer in arch.layers}
    if getattr(arch, "uses_mla", False):
        attention = "mla"
    elif kinds - {"full"}:
        attention = "hybrid-" + "-".join(sorted(kinds - {"full"}))
    else:
        attention = "full"
    return ModelClass(attention=attention, size_band=size_band(spec.weights_bytes / 2**30))


def status_for(deviation: float, tolerance: float = TOLERANCE) -> str:
    """``verified``, ``within_tolerance`` or ``deviates`` for a relative deviation."""
    size = abs(deviation)
    if size <= min(VERIFIED_WITHIN, tolerance):
        return "verified"
    if size <= tolerance:
        return "within_tolerance"
    return "deviates"


def compare(
    name: str, quantity: str, unit: str, predicted: float, measured: float, source: str, **kw: Any
) -> CheckResult:
    """A :class:`CheckResult` for ``predicted`` against ``measured`` (non-zero).

    Keywords: ``tolerance`` (default :data:`TOLERANCE`), ``cap`` (a *verified* result is
    reported as *within tolerance*) and the optional fields of :class:`CheckResult`.
    """
    deviation = (predicted - measured) / measured if measured else 0.0
    tolerance = kw.pop("tolerance", TOLERANCE)
    status = status_for(deviation, tolerance)
    if kw.pop("cap", False) and status == "verified":
        status = "within_tolerance"
    return CheckResult(
        name=name,
        quantity=quantity,
        unit=unit,
        predicted=predicted,
        measured=measured,
        deviation=deviation,
        tolerance=tolerance,
        status=status,
        source=source,
        **kw,
    )


def select_comparable(
    records: Iterable[RecordLike],
    *,
    model_id: str,
    klass: ModelClass | None,
    gpu: str,
    class_of: Callable[[str], ModelClass | None],
    target_version: str = TARGET_VLLM_VERSION,
    limit: int = MAX_RECORDS,
) -> list[RecordLike]:
    """Records comparable with a plan, best first.

    Args:
        records: candidates (KV-pool measurements).
        model_id: the plan's model; same-model records are preferred.
        klass: the plan model's class, for the fallback tier.
        gpu: the plan's GPU class (see :func:`gpu_class`); only records of it count.
        class_of: ``model_id -> ModelClass | None`` for the records' models.
        target_version: versions nearest to this come first.
        limit: how many to return.
    """
    same_gpu = [r for r in records if r.gpu_class == gpu and r.kv_cache_gib]
    same_model = [r for r in same_gpu if r.model_id.lower() == model_id.lower()]
    chosen = same_model
    if not chosen and klass is not None:
        chosen = [r for r in same_gpu if class_of(r.model_id) == klass]
    return sorted(
        chosen, key=lambda r: (version_distance(r.engine_version, target_version), str(r.pk))
    )[:limit]


WIDTH_DEPENDENT = frozenset({"kv_cache_tokens", "max_concurrency"})
"""Quantities that depend on the bytes per cached value: a pool in GiB holds twice the
tokens at FP8 that it holds at 16 bits, so these compare only at the same width."""


def kv_value_bytes(kv_cache_dtype: str, model_dtype: str = "") -> int:
    """Bytes per cached value for an engine's ``--kv-cache-dtype`` or a plan's ``kv_dtype``.

    ``fp8`` (and vLLM's ``fp8_e4m3``, ``fp8_e5m2``) is one byte; ``auto`` is the model's
    dtype (vllm/config/cache.py), 16-bit unless ``model_dtype`` says float32.
    """
    text = (kv_cache_dtype or "auto").lower()
    if text.startswith("fp8"):
        return 1
    if "32" in text or (text.startswith("auto") and "32" in (model_dtype or "")):
        return 4
    return 2


def shorten(text: str, width: int) -> str:
    """``text`` cut at a word boundary to at most ``width`` characters, ending in ``…``."""
    return textwrap.shorten(text, width=width, placeholder=" …")


def record_label(record: RecordLike) -> str:
    """A short name of a record for check names; a long GPU description ends at a word."""
    label = record.case_id or f"record {record.pk}"
    return (
        f"{label}: {record.model_id}, {record.engine} {record.engine_version}, "
        f"TP {record.tensor_parallel_size}, {shorten(record.gpu_type, GPU_NAME_WIDTH)}"
    )


def is_same_model(a: str, b: str) -> bool:
    """Whether two Hugging Face repository ids name the same model (case-insensitive)."""
    return a.strip().lower() == b.strip().lower()


def fallback_note(record: RecordLike, klass: ModelClass | None) -> str:
    """Why a check against another model's record counts only with a wider tolerance."""
    kind = f" ({klass.attention} attention, {klass.size_band} GiB of weights)" if klass else ""
    return (
        f"another model of the same class{kind}: {record.model_id}; "
        f"tolerance ±{FALLBACK_TOLERANCE:.0%}, at best within tolerance"
    )


def prediction_checks(
    record: RecordLike,
    spec: ModelSpec,
    predicted: KvPoolPrediction,
    *,
    plan_model_id: str = "",
    klass: ModelClass | None = None,
) -> list[CheckResult]:
    """Compare a calibrated prediction for ``record``'s settings with its measurement.

    Args:
        record: the measurement.
        spec: the record's model spec (unused beyond provenance; kept for callers).
        predicted: a ``sizing.memory.calibrated.KvPoolPrediction``.
        plan_model_id: the plan's model; a record of another model is a class fallback,
            checked with :data:`FALLBACK_TOLERANCE` and never better than
            *within tolerance* (see the module docstring).
        klass: the plan model's class, named in a fallback's note.
    """
    label = record_label(record)
    source = f"{record.source} (calibrated engine model vs. measured)"
    fallback = bool(plan_model_id) and not is_same_model(record.model_id, plan_model_id)
    basis: dict[str, Any] = (
        {"tolerance": FALLBACK_TOLERANCE, "note": fallback_note(record, klass), "cap": True}
        if fallback
        else {}
    )
    checks = []
    for title, quantity, unit, needs_prediction in PREDICTED_QUANTITIES:
        measured = getattr(record, quantity)
        value = getattr(predicted, quantity)
        if not measured or (needs_prediction and not value):
            continue
        checks.append(
            compare(
                f"{title} — {label}",
                quantity,
                unit,
                float(value),
                float(measured),
                source,
                record=record,
                **basis,
            )
        )
    return checks


def budget_checks(
    *,
    plan_kv_gib_per_gpu: float,
    plan_utilization: float,
    plan_tp: int,
    plan_weights_gib_per_gpu: float,
    records: Sequence[RecordLike],
    model_id: str,
) -> list[CheckResult]:
    """The plan's per-GPU KV budget against measured pools of the same model and GPU.

    Only vLLM starts with the plan's layout (same TP, no pipeline stages) and the same
    weights per GPU (within 10 %, so another dtype or quantization is left out) count.
    A pool measured at another utilization is moved to the plan's:
    ``kv + (plan_util − record_util) × total`` (reference ``vllm_memory_model.md`` §1.2).
    """
    checks = []
    for record in records:
        weights = getattr(record, "weights_gib", None)
        if (
            record.model_id.lower() != model_id.lower()
            or record.tensor_parallel_size != plan_tp
            or record.pipeline_parallel_size != 1
            or not record.kv_cache_gib
            or record.engine != "vllm"
            or (weights and abs(weights / plan_weights_gib_per_gpu - 1) > TOLERANCE)
        ):
            continue
        measured = float(record.kv_cache_gib)
        util, total = record.gpu_memory_utilization, record.gpu_total_memory_gib
        if util and total:
            measured += (plan_utilization - util) * total
        if measured <= 0:
            continue
        checks.append(
            compare(
                f"Plan KV budget per GPU vs. measured — {record_label(record)}",
                "kv_budget_gib",
                "GiB",
                plan_kv_gib_per_gpu,
                measured,
                f"{record.source} (measured pool at utilization {plan_utilization:g})",
                record=record,
            )
        )
    return checks
