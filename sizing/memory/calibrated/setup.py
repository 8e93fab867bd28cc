"""The engine start-up settings a KV-pool prediction depends on, and its result.

Only inputs known before the engine starts belong here: engine and version, the GPU's
CUDA-reported total memory, parallel sizes, utilization or ``mem_fraction_static``,
``max_model_len``, block size, KV dtype and runtime quantization. Measured figures
(weights, activation, free memory, the KV pool itself) never enter a prediction.

Sources: the CUDA totals are the values vLLM printed in the reference's engine logs
(``vllm_memory_model.md`` §1.1: H100-80GB 79.18–79.22 GiB, A100-80GB 79.25, A100-40GB
39.50 (vllm issue #12330: "total_gpu_memory (39.50GiB)"), H200 139.8,
B200 178.35, L40S 44.42, RTX PRO 6000 server 95.01, RTX 4090 23.99, RTX 3090 23.58,
L4 22.49 (``nvidia-smi`` 23,034 MiB, the hardware catalog's source),
RTX 4080 15.99); a 97,887 MiB RTX PRO 6000 (nvidia-smi) is 95.59 GiB. Compute capability
and NVLink/NVSwitch per GPU class: NVIDIA datasheets (A100/L40S/RTX: sm80/89/86 on PCIe;
H100/H200 SXM sm90 and B200 sm100 on an NVSwitch baseboard; H100 PCIe sm90 without one,
its CUDA total from the hardware catalog, whose source for it is not recorded). The
reference's H100 logs come from 8-GPU SXM servers (llm-d-planner sweep), so an "H100 80GB"
is taken as SXM.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sizing.errors import SizingError


@dataclass(frozen=True)
class EngineSetup:
    """How one engine instance is started.

    Attributes:
        engine: ``"vllm"`` or ``"sglang"``.
        engine_version: the version string (``"0.19.0"``; extra text is ignored).
        gpu_total_memory_gib: the total CUDA reports for one GPU, GiB.
        max_model_len: the longest request, tokens.
        tensor_parallel_size, pipeline_parallel_size, data_parallel_size: parallel sizes.
        gpu_memory_utilization: vLLM's share of the total (``None``: the version default).
        mem_fraction_static: SGLang's static share (``None``: its default formula).
        block_size: tokens per KV block (``None``: 16 on CUDA, vLLM
            ``CacheConfig.DEFAULT_BLOCK_SIZE``).
        kv_cache_dtype: ``auto``, ``fp8``, ``bf16``…
        quantization: runtime or checkpoint quantization flag (``fp8`` quantizes a
            16-bit checkpoint at load).
        max_num_batched_tokens: the scheduler's token budget (``None``: the default of
            that version and GPU).
        expert_parallel: experts split over the data-parallel × tensor-parallel ranks.
        dtype: the serving dtype (``auto`` = the checkpoint's).
        gpu_type: the GPU's name as given (selects compute capability and NVLink; empty:
            found from ``gpu_total_memory_gib``).
        cuda_graph_profiling: whether vLLM subtracts its CUDA-graph estimate before the
            KV pool (``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS``, graphs not disabled);
            ``None``: not stated, the version's default (on from v0.20,
            :mod:`sizing.memory.calibrated.vllm`).
        max_num_seqs: the scheduler's sequence limit (``None``: the version's default).
        sort_sampler: whether vLLM's sampler sorts the logits with PyTorch (no FlashInfer
            sampler, before the Triton kernel of v0.17); ``None``: the version's default
            (:func:`sizing.memory.calibrated.vllm.sorts_in_sampler`).
    """

    engine: str
    engine_version: str
    gpu_total_memory_gib: float
    max_model_len: int
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    gpu_memory_utilization: float | None = None
    mem_fraction_static: float | None = None
    block_size: int | None = None
    kv_cache_dtype: str = "auto"
    quantization: str | None = None
    max_num_batched_tokens: int | None = None
    expert_parallel: bool = False
    dtype: str = "auto"
    gpu_type: str = ""
    cuda_graph_profiling: bool | None = None
    max_num_seqs: int | None = None
    sort_sampler: bool | None = None

    @property
    def version(self) -> tuple[int, ...]:
        """The engine version; of a stated range its first end (``"~0.10.2-0.11"`` →
        (0, 10, 2)); :attr:`version_range` gives both."""
        return parse_version_range(self.engine_version)[0]

    @property
    def version_range(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The first and last version the stated version may be (equal for one version)."""
        return parse_version_range(self.engine_version)

    @property
    def gpu_class(self) -> GpuClass | None:
        """The GPU class named by ``gpu_type``, else the one with this CUDA total."""
        return gpu_class(self.gpu_type, self.gpu_total_memory_gib)


@dataclass(frozen=True)
class KvPoolPrediction:
    """A predicted KV pool, per GPU.

    Attributes:
        kv_cache_gib: bytes the engine gives the KV cache on one GPU, GiB.
        kv_cache_tokens: the token capacity the engine reports.
        num_gpu_blocks: KV blocks (vLLM), ``None`` for SGLang.
        max_concurrency: max_model_len requests that fit at once.
        weights_gib: predicted weights per GPU, GiB.
        activation_gib: predicted peak activation per GPU, GiB (0 for SGLang).
        non_torch_gib: predicted non-torch memory per GPU, GiB.
        cuda_graph_gib: CUDA-graph memory subtracted before the KV pool, GiB.
        kv_cache_gib_band: the lowest and highest KV GiB the prediction allows: over a
            version range whose terms differ inside it (``kv_cache_gib`` is their middle),
            or the stated band of a 4-bit checkpoint
            (:func:`sizing.memory.calibrated.vllm.quantized_band_gib`); else ``None``.
    """

    kv_cache_gib: float
    kv_cache_tokens: int
    num_gpu_blocks: int | None
    max_concurrency: float
    weights_gib: float
    activation_gib: float
    non_torch_gib: float
    cuda_graph_gib: float
    kv_cache_gib_band: tuple[float, float] | None = None


_VERSION_RANGE = re.compile(r"\d+(?:\.\d+)+(?:\s*[-/]\s*(\d+(?:\.\d+)+))?")
_LAST_PATCH = 99
"""Patch number that stands for "any patch" at the open end of a range (``0.11`` → 0.11.99)."""


def parse_version_range(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The first and last version ``text`` names: one dotted number (both ends the same),
    or a range written ``A-B`` or ``A/B`` (a log that does not state its build, e.g.
    ``"~0.10.2-0.11"`` → ((0, 10, 2), (0, 11, 99)): a last end without a patch number
    stands for every patch of that minor version); ``((0,), (0,))`` when none.
    """
    match = _VERSION_RANGE.search(text or "")
    if not match:
        return (0,), (0,)
    first = tuple(int(part) for part in match.group(0).split("-")[0].split("/")[0].split("."))
    if not match.group(1):
        return first, first
    last = tuple(int(part) for part in match.group(1).split("."))
    if len(last) == 2:
        last = (*last, _LAST_PATCH)
    return first, last


def parse_version(text: str) -> tuple[int, ...]:
    """The first version ``text`` names (:func:`parse_version_range`), ``(0,)`` when none."""
    return parse_version_range(text)[0]


def versions_in_range(
    first: tuple[int, ...], last: tuple[int, ...], changes: tuple[tuple[int, ...], ...]
) -> tuple[tuple[int, ...], ...]:
    """``first``, ``last`` and every version of ``changes`` (where a term changes) that
    lies between them, in order, without repeats."""
    inside = {v for v in changes if first < v <= last}
    return tuple(sorted({first, last} | inside))


@dataclass(frozen=True)
class GpuClass:
    """What the engines' memory behaviour depends on about a GPU.

    Attributes:
        cuda_total_gib: the total CUDA reports, GiB.
        compute_capability: ``(major, minor)``, e.g. ``(9, 0)`` for Hopper.
        nvswitch: all GPUs of the server share an NVLink/NVSwitch fabric (SXM boards).
    """

    cuda_total_gib: float
    compute_capability: tuple[int, int]
    nvswitch: bool


_GPU_CLASSES: tuple[tuple[str, GpuClass], ...] = (
    ("h200", GpuClass(139.8, (9, 0), True)),
    ("b200", GpuClass(178.35, (10, 0), True)),
    ("h100 pcie", GpuClass(79.11, (9, 0), False)),
    ("h100", GpuClass(79.19, (9, 0), True)),
    ("a100 80", GpuClass(79.25, (8, 0), False)),
    ("a100 40", GpuClass(39.5, (8, 0), False)),
    ("l40s", GpuClass(44.42, (8, 9), False)),
    ("97,887 mib", GpuClass(95.59, (12, 0), False)),
    ("rtx pro 6000", GpuClass(95.01, (12, 0), False)),
    ("rtx 4090", GpuClass(23.99, (8, 9), False)),
    ("rtx 3090", GpuClass(23.58, (8, 6), False)),
    ("rtx 4080", GpuClass(15.99, (8, 9), False)),
    ("l4 24gb", GpuClass(22.49, (8, 9), False)),
    ("80gb-class", GpuClass(79.19, (9, 0), True)),
)
"""GPU name fragment → its class (module sources); first match wins."""


def gpu_class(gpu_type: str, total_gib: float | None = None) -> GpuClass | None:
    """The class of a GPU named ``gpu_type``; failing a name, the class whose CUDA total
    is within 0.05 GiB of ``total_gib``; ``None`` when neither is known."""
    name = (gpu_type or "").lower()
    found = next((cls for key, cls in _GPU_CLASSES if key in name), None)
    if found is None and total_gib:
        found = next(
            (cls for _, cls in _GPU_CLASSES if abs(cls.cuda_total_gib - total_gib) <= 0.05), None
        )
    return found


def cuda_total_gib(gpu_type: str) -> float | None:
    """The CUDA-reported total of a GPU named ``gpu_type``, or ``None`` when unknown."""
    found = gpu_class(gpu_type)
    return found.cuda_total_gib if found else None


_PRE_START_KEYS = (
    "engine",
    "engine_version",
    "model_id",
    "dtype",
    "quantization",
    "kv_cache_dtype",
    "gpu_type",
    "gpu_total_memory_gib",
    "gpu_count",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "expert_parallel",
    "gpu_memory_utilization",
    "mem_fraction_static",
    "max_model_len",
    "block_size",
    "cuda_graph_profiling",
    "max_num_seqs",
    "sort_sampler",
)
"""The only fields of a ground-truth case a prediction may read."""


def pre_start_inputs(case: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of a case that was known before the engine started."""
    return {key: case.get(key) for key in _PRE_START_KEYS}


def setup_from_case(case: Mapping[str, Any], max_position_embeddings: int = 0) -> EngineSetup:
    """An :class:`EngineSetup` from a ground-truth case, reading pre-start fields only.

    Args:
        case: one entry of ``ground_truth_cases.json`` (schema of the reference
            ``ground_truth/cases.json``).
        max_position_embeddings: the model's limit, the engines' default
            ``max_model_len`` when the case does not set one (vLLM
            ``ModelConfig.get_and_verify_max_len``; SGLang ``context_len``).

    Raises:
        SizingError: naming the pre-start input that is missing (the case is then
            skipped by the accuracy command).
    """
    inputs = pre_start_inputs(case)
    engine = str(inputs["engine"] or "").lower()
    if engine not in ("vllm", "sglang"):
        raise SizingError("engine", f"engine {inputs['engine']!r} is not vllm or sglang")
    total = inputs["gpu_total_memory_gib"] or cuda_total_gib(str(inputs["gpu_type"] or ""))
    if not total:
        raise SizingError(
            "gpu_total_memory_gib",
            f"the CUDA total of GPU {inputs['gpu_type']!r} is not known and not given",
        )
    max_len = inputs["max_model_len"] or max_position_embeddings
    if not max_len:
        raise SizingError("max_model_len", "max_model_len is not given")
    tp = int(inputs["tensor_parallel_size"] or 1)
    kv_dtype = str(inputs["kv_cache_dtype"] or "auto").split()[0].lower()
    quant = inputs["quantization"]
    dtype = str(inputs["dtype"] or "auto").lower()
    return EngineSetup(
        engine=engine,
        engine_version=str(inputs["engine_version"] or ""),
        gpu_total_memory_gib=float(total),
        max_model_len=int(max_len),
        tensor_parallel_size=tp,
        pipeline_parallel_size=int(inputs["pipeline_parallel_size"] or 1),
        data_parallel_size=int(inputs["data_parallel_size"] or 1),
        gpu_memory_utilization=inputs["gpu_memory_utilization"],
        mem_fraction_static=inputs["mem_fraction_static"],
        block_size=inputs["block_size"],
        kv_cache_dtype=kv_dtype,
        quantization=str(quant).split()[0].lower() if quant else None,
        expert_parallel=bool(inputs["expert_parallel"]),
        dtype=dtype,
        gpu_type=str(inputs["gpu_type"] or ""),
        cuda_graph_profiling=inputs["cuda_graph_profiling"],
        max_num_seqs=inputs["max_num_seqs"],
        sort_sampler=inputs["sort_sampler"],
    )
