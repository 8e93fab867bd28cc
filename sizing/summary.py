"""The plan's JSON summary: the stable contract of ``manage.py size --format json``.

``docs/cli.md`` ("The JSON contract") documents every key of :class:`PlanSummary` with
its unit; a test holds the two together. New keys may be added, none is renamed or
removed. Every surface that shows or stores a plan's figures (the CLI, the JSON API,
the page's stored inquiry, quote alternatives, the deployment bundle) takes them from
:func:`plan_summary`.

Rounding is part of the contract: GiB to 2 places (4 for one conversation), hit rates
to 4, times in ms to 1. The traffic keys (:class:`TrafficKeys`) are ``None`` when the
GPU has no measured performance basis (the plan is then sized for memory only).
"""

from __future__ import annotations

import math
from typing import TypedDict, cast

from sizing.bom.lines import not_buildable_reason
from sizing.model.config_reader import ASSUMPTIONS
from sizing.performance.calibration import citation
from sizing.performance.hit_value import TransferEstimate
from sizing.plan.orchestrator import Plan
from sizing.serving.serve import Serving
from sizing.units import GIB
from sizing.verdict import Note


class TtftPoint(TypedDict):
    """One point of the TTFT curve: a returning user's TTFT at ``context_tokens``, ms,
    without a hit and per tier (``None`` for a tier without a measured path)."""

    context_tokens: int
    miss_ms: float
    hit_ms: dict[str, float | None]


class NoteJson(TypedDict):
    """A verdict reason or warning as its code and the numbers its sentence quotes."""

    code: str
    values: dict[str, int | float | str]


class VerdictNotes(TypedDict):
    """The verdict's reasons and warnings as codes, for wording in the reader's language."""

    reasons: list[NoteJson]
    warnings: list[NoteJson]


class TransferKeys(TypedDict):
    """Reload, recompute and TTFT of a returning user (:mod:`sizing.performance.hit_value`); the
    times are ``None`` without a measured basis."""

    reload_ms: float | None
    recompute_ms: float | None
    reload_effective_gbs: float
    ttft_miss_ms: float | None
    ttft_band_pct: float | None
    ttft_miss_range_ms: list[float] | None
    ttft_hit_ms: dict[str, float | None] | None
    ttft_speedup: dict[str, float | None] | None
    ttft_new_tokens: int | None
    performance_basis: list[str]
    performance_sources: list[str]
    performance_notes: list[str]
    ttft_curve: list[TtftPoint]


class TrafficKeys(TypedDict):
    """The plan under traffic (:mod:`sizing.serving.serve`): hit rates as shares of returning
    turns (0 to 1), times in ms, ``shared_tier_tb`` in TB (10^12 B) and the
    ``shared_tier_*gbps`` in GB/s per node (0 without a shared tier). All ``None``
    when the GPU has no measured basis."""

    gpu_hit_rate: float | None
    cpu_hit_rate: float | None
    nvme_hit_rate: float | None
    shared_tier_hit_rate: float | None
    miss_rate: float | None
    shared_tier_tb: float | None
    shared_tier_gbps: float | None
    shared_tier_read_gbps: float | None
    shared_tier_write_gbps: float | None
    ttft_p95_ms: float | None
    ttft_p95_without_tier_ms: float | None
    tpot_ms: float | None
    ttft_p95_target_ms: float | None
    tpot_target_ms: float | None
    ttft_p95_sized_ms: float | None
    tpot_sized_ms: float | None
    meets_targets: bool | None
    gpus_for_compute: int | None
    gpus_for_memory: int | None
    gpus_without_tier: int | None
    gpus_saved: int | None
    binding: str | None
    requests_per_s: float | None
    router: str | None
    traffic_assumptions: list[str] | None


class PlanSummary(TransferKeys, TrafficKeys):
    """The whole summary (units in ``docs/cli.md``). Memory figures (DIMMs, host memory,
    NVMe) are for one node; the plan has ``nodes`` identical nodes. In JSON the keys
    come in the order of :func:`plan_summary`."""

    model: str
    gpu: str
    gpus_per_node: int
    node_buildable: bool
    node_not_buildable_reason: str | None
    context_tokens: int
    users: int
    kv_dtype: str
    kv_bytes_per_token: int
    conversation_gib: float
    weights_gib: float
    kv_cache_gib_per_gpu: float
    conversations_per_gpu: float
    conversations_per_replica: int
    conversations_on_gpus: int
    resting_conversations: int
    conversations_resident: int
    conversations_in_cpu_tier: int
    conversations_on_nvme: int
    conversations_in_nvme_tier: int
    conversations_recomputed: int
    conversations_in_shared_tier: int
    tensor_parallel_size: int
    replicas: int
    nodes: int
    pipeline_parallel_size: int
    expert_parallel_size: int
    data_parallel_size: int
    gpus_total: int
    layout: str
    weights_gib_per_gpu: float
    active_users: int | None
    active_users_fit: bool
    shared_prompt_tokens: int
    shared_prompt_gib: float
    conversation_unique_gib: float
    cpu_tier_total_gib: float
    cpu_tier_total_gb: float
    cpu_tier_per_instance_gib: float
    dimm_count: int
    dimm_gb: int
    dimms_per_channel: int
    host_memory_gb: int
    host_memory_free_after_buffer_gb: float
    nvme_writes_tb_per_day: float
    nvme_writes_tb_per_day_per_node: float
    nvme_drive: str | None
    nvme_drive_count: int
    nvme_reload_ms: float | None
    vllm_kv_offloading_size_gib: int | None
    vllm_cpu_bytes_to_use: int | None
    offload_pays: bool
    verdict_reasons: list[str]
    warnings: list[str]
    binding_constraints: list[str]
    assumptions: list[str]
    verdict_notes: VerdictNotes


def plan_summary(plan: Plan) -> PlanSummary:
    """The JSON summary of ``plan`` (keys, units and rounding: ``docs/cli.md``)."""
    work = plan.request.workload
    p = plan.parallelism
    where = plan.placement
    offload = plan.vllm_offload
    unbuildable = not_buildable_reason(plan)
    return {
        "model": plan.request.model.repo_id,
        "gpu": plan.gpu.slug,
        "gpus_per_node": work.gpus_per_node,
        "node_buildable": unbuildable is None,
        "node_not_buildable_reason": unbuildable.message if unbuildable else None,
        "context_tokens": work.context_tokens,
        "users": work.users,
        "kv_dtype": work.kv_dtype,
        "kv_bytes_per_token": plan.kv_bytes_per_token,
        "conversation_gib": round(plan.conversation_gib, 4),
        "weights_gib": round(plan.weights_gib, 2),
        "kv_cache_gib_per_gpu": round(p.kv_cache_gib_per_gpu, 2),
        "conversations_per_gpu": p.conversations_per_gpu,
        "conversations_per_replica": p.conversations_per_replica,
        "conversations_on_gpus": p.conversations_on_gpus,
        "resting_conversations": plan.resting_conversations,
        "conversations_resident": where.on_gpus,
        "conversations_in_cpu_tier": where.in_cpu_tier,
        "conversations_on_nvme": where.on_nvme,
        "conversations_in_nvme_tier": where.in_nvme_tier,
        "conversations_recomputed": where.recomputed,
        "conversations_in_shared_tier": where.in_shared_tier,
        "tensor_parallel_size": p.tensor_parallel_size,
        "replicas": p.total_replicas,
        "nodes": p.nodes,
        "pipeline_parallel_size": p.pipeline_parallel_size,
        "expert_parallel_size": p.expert_parallel_size,
        "data_parallel_size": p.data_parallel_size,
        "gpus_total": p.gpus,
        "layout": p.layout,
        "weights_gib_per_gpu": round(p.weights_gib_per_gpu, 2),
        "active_users": work.active_users,
        "active_users_fit": plan.active_users_fit,
        "shared_prompt_tokens": work.shared_prompt_tokens,
        "shared_prompt_gib": round(plan.shared_prompt_bytes / GIB, 4),
        "conversation_unique_gib": round(plan.unique_conversation_bytes / GIB, 4),
        "cpu_tier_total_gib": round(plan.cpu_tier.total_gib, 2),
        "cpu_tier_total_gb": round(plan.cpu_tier.total_gb, 1),
        "cpu_tier_per_instance_gib": round(plan.cpu_tier.per_instance_gib, 2),
        "dimm_count": plan.host.dimm_count,
        "dimm_gb": plan.host.dimm_gb,
        "dimms_per_channel": plan.host.dimms_per_channel,
        "host_memory_gb": plan.host.total_gb,
        "host_memory_free_after_buffer_gb": round(plan.host.free_after_buffer_gb, 1),
        "nvme_writes_tb_per_day": round(plan.nvme.total_writes_tb_per_day, 3),
        "nvme_writes_tb_per_day_per_node": round(plan.nvme.writes_tb_per_day, 3),
        "nvme_drive": plan.nvme.drive.model if plan.nvme.drive else None,
        "nvme_drive_count": plan.nvme.drive_count,
        "nvme_reload_ms": _ms(plan.nvme.reload_ms),
        **transfer_keys(plan.transfer),
        "vllm_kv_offloading_size_gib": offload.kv_offloading_size_gib if offload else None,
        "vllm_cpu_bytes_to_use": offload.cpu_bytes_to_use if offload else None,
        **traffic_keys(plan.serving, gpus_per_replica=p.gpus_per_replica),
        "offload_pays": plan.verdict.offload_pays,
        "verdict_reasons": list(plan.verdict.reasons),
        "warnings": list(plan.verdict.warnings),
        "binding_constraints": list(plan.verdict.binding),
        "assumptions": [ASSUMPTIONS[code] for code in plan.request.model.architecture.assumptions],
        "verdict_notes": {
            "reasons": [_note(n) for n in plan.verdict.reason_notes],
            "warnings": [_note(n) for n in plan.verdict.warning_notes],
        },
    }


def _ms(value: float | None) -> float | None:
    """A time in ms to one decimal (``None`` stays ``None``)."""
    return None if value is None else round(value, 1)


def _note(note: Note) -> NoteJson:
    return {"code": note.code, "values": dict(note.values)}


def transfer_keys(t: TransferEstimate) -> TransferKeys:
    """The reload and TTFT keys: ``reload_ms`` and ``recompute_ms`` (``None`` without a
    measured basis), the returning user's ``ttft_miss_ms``, ``ttft_hit_ms`` and
    ``ttft_speedup`` per tier (``None`` for a tier without a measured path),
    ``ttft_band_pct`` and ``ttft_miss_range_ms`` (for a GPU estimated from another card's
    measurement: the band, %, and the miss's TTFT at its two ends; ``None`` for a GPU
    measured itself, :meth:`~sizing.performance.calibration.Basis.range_ms`),
    ``ttft_new_tokens``, ``reload_effective_gbs``, ``performance_basis`` (measurement
    ids), ``performance_sources`` (what each id is), ``performance_notes`` and
    ``ttft_curve`` (:meth:`TransferEstimate.curve`)."""
    r = t.returning
    band = t.basis.band_pct if t.basis else None
    miss_range = t.basis.range_ms(r.miss_ms) if t.basis and r else None
    return {
        "reload_ms": _ms(t.reload_ms),
        "recompute_ms": _ms(t.recompute_ms),
        "reload_effective_gbs": round(t.effective_gbs, 1),
        "ttft_miss_ms": _ms(r.miss_ms) if r else None,
        "ttft_band_pct": band,
        "ttft_miss_range_ms": [round(x, 1) for x in miss_range] if miss_range else None,
        "ttft_hit_ms": {h.tier: _ms(h.ttft_ms) for h in r.hits} if r else None,
        "ttft_speedup": (
            {h.tier: None if h.speedup is None else round(h.speedup, 1) for h in r.hits}
            if r
            else None
        ),
        "ttft_new_tokens": r.new_tokens if r else None,
        "performance_basis": list(t.basis.sources) if t.basis else [],
        "performance_sources": [citation(i) for i in t.basis.sources] if t.basis else [],
        "performance_notes": list(t.notes),
        "ttft_curve": cast(list[TtftPoint], t.curve()),
    }


def traffic_keys(serving: Serving | None, *, gpus_per_replica: int) -> TrafficKeys:
    """The traffic keys (:class:`TrafficKeys`), every one ``None`` when ``serving`` is
    ``None`` (no measured basis for the GPU)."""
    if serving is None:
        return cast(TrafficKeys, dict.fromkeys(TrafficKeys.__annotations__))
    final, sc, shared = serving.final, serving.scale, serving.shared
    hits, load = final.hits, final.load

    def ms(value: float) -> float | None:
        return round(value, 1) if math.isfinite(value) else None

    compute = sc.replicas_for_compute
    return {
        "gpu_hit_rate": round(hits.gpu, 4),
        "cpu_hit_rate": round(hits.cpu, 4),
        "nvme_hit_rate": round(hits.nvme, 4),
        "shared_tier_hit_rate": round(hits.shared, 4),
        "miss_rate": round(hits.miss, 4),
        "shared_tier_tb": round(shared.capacity_tb, 2) if shared else 0.0,
        "shared_tier_gbps": round(shared.gbps_per_node, 3) if shared else 0.0,
        "shared_tier_read_gbps": round(shared.read_gbps_per_node, 3) if shared else 0.0,
        "shared_tier_write_gbps": round(shared.write_gbps_per_node, 3) if shared else 0.0,
        "ttft_p95_ms": ms(load.ttft_p95_ms),
        "ttft_p95_without_tier_ms": ms(sc.no_tier_same_gpus.load.ttft_p95_ms),
        "tpot_ms": ms(load.tpot_ms),
        "ttft_p95_target_ms": round(serving.ttft_p95_target_ms, 1),
        "tpot_target_ms": round(serving.tpot_target_ms, 1),
        "ttft_p95_sized_ms": round(serving.ttft_p95_sized_ms, 1),
        "tpot_sized_ms": round(serving.tpot_sized_ms, 1),
        "meets_targets": serving.meets_targets,
        "gpus_for_compute": compute * gpus_per_replica if compute else None,
        "gpus_for_memory": sc.replicas_for_memory * gpus_per_replica,
        "gpus_without_tier": (
            sc.no_tier_replicas * gpus_per_replica if sc.no_tier_replicas else None
        ),
        "gpus_saved": serving.benefit.gpus_saved if serving.benefit.offload_pays else 0,
        "binding": sc.binding,
        "requests_per_s": round(serving.requests_per_s, 3),
        "router": serving.router.command if serving.router else None,
        "traffic_assumptions": list(serving.assumptions),
    }
