"""Reload time of a conversation's cached KV from a tier, per engine.

What callers pass: a :class:`~sizing.performance.shape.ModelShape`, the engine
(``vllm``, ``lmcache``, ``sglang``, ``dynamo``), the tier (``gpu``, ``cpu``, ``nvme``,
``shared``), a catalog GPU slug, the TP size and the cached tokens to reload.

The rule (docs/sizing.md §6, "TTFT of a hit is a fixed per-request cost plus bytes ÷
effective bandwidth"):

``reload_ms = fixed + tokens · per_token + max(bytes_per_rank ÷ rate_per_rank,
bytes_all_ranks ÷ rate_per_instance)``

- ``bytes_per_rank``: what one TP rank stores of the conversation
  (:meth:`ModelShape.kv_bytes_per_rank`: KV heads split over TP, replicated when TP
  exceeds them, MLA latents on every rank); the ranks copy over their own links in
  parallel.
- ``rate_per_rank``: for a PCIe path the measured pinned host-to-device rate of the
  card's link (:func:`sizing.hardware.catalog.pcie_h2d_gbs`) times the engine's measured share;
  for a file or network path the measured effective rate.
- ``rate_per_instance``: a limit that does not grow with TP (one copy process, one NIC,
  one file backend), where one was measured.
- ``fixed`` and ``per_token`` (lookups and the per-block copy set-up): measured per
  engine and tier. A path measured only at other TP sizes than the instance's says so in
  its basis note (``measured_tp``). All constants and the measurement each rests on:
  ``sizing/data/performance.json``; a path without a measurement raises
  :class:`~sizing.performance.calibration.NoMeasuredBasis`.

The ``gpu`` tier is a GPU prefix-cache hit: nothing moves, only the lookup costs.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.hardware import catalog
from sizing.performance.calibration import Basis, reload_path
from sizing.performance.shape import ModelShape


@dataclass(frozen=True)
class ReloadTime:
    """One reload's time and its parts.

    Attributes:
        total_ms: fixed + per-token + transfer.
        fixed_ms: the copy's per-request cost (a reload of 0 tokens costs nothing).
        per_token_ms: the per-token cost beyond the bytes.
        transfer_ms: moving the bytes.
        bytes_per_rank: what each rank moves.
        effective_gbs: bytes of one rank ÷ the whole reload time, GB/s (0 for the GPU
            tier).
        basis: the measurements.
        hit_correction_ms: what a hit's TTFT adds beyond this reload and the prefill of
            the new tokens (:attr:`~sizing.performance.calibration.ReloadPath.
            hit_correction_ms`); ``ttft_hit`` applies it.
    """

    total_ms: float
    fixed_ms: float
    per_token_ms: float
    transfer_ms: float
    bytes_per_rank: int
    effective_gbs: float
    basis: Basis
    hit_correction_ms: float = 0.0


def reload(
    shape: ModelShape, *, engine: str, tier: str, gpu: str, tp: int, tokens: int
) -> ReloadTime:
    """Time for ``engine`` to bring ``tokens`` cached tokens from ``tier`` to the GPUs.

    Args:
        shape: the model (:func:`~sizing.performance.shape.model_shape`).
        engine: ``vllm``, ``lmcache``, ``sglang`` or ``dynamo``.
        tier: ``gpu``, ``cpu``, ``nvme`` or ``shared``.
        gpu: catalog slug of the card (its PCIe generation sets the host link).
        tp: tensor parallel size of the instance.
        tokens: cached tokens to reload, ≥ 0.

    Raises:
        NoMeasuredBasis: on field ``engine`` or ``tier`` when no measurement covers
            that path.
        SizingError: on field ``gpu`` for an unknown slug.
        ValueError: for a negative token count or a TP size below 1.
    """
    if tokens < 0 or tp < 1:
        raise ValueError(f"tokens must be ≥ 0 and tp ≥ 1, got {tokens} and {tp}")
    path = reload_path(engine, tier)
    card = catalog.gpu(gpu)
    per_rank = shape.kv_bytes_per_rank(tokens, tp) if tier != "gpu" else 0
    transfer_s = 0.0
    if per_rank:
        if path.link == "pcie":
            rate = catalog.pcie_h2d_gbs(card.pcie_gen) * path.link_efficiency
        else:
            rate = float(path.gbs_per_rank or 0.0)
        transfer_s = per_rank / (rate * 1e9) if rate else 0.0
        if path.gbs_per_instance:
            transfer_s = max(transfer_s, per_rank * tp / (path.gbs_per_instance * 1e9))
    basis = path.at_tp(engine, tier, tp)
    if tokens == 0:
        return ReloadTime(0.0, 0.0, 0.0, 0.0, 0, 0.0, basis, path.hit_correction_ms)
    per_token_ms = tokens * path.per_token_us / 1e3
    total_ms = path.fixed_ms + per_token_ms + transfer_s * 1e3
    return ReloadTime(
        total_ms=total_ms,
        fixed_ms=path.fixed_ms,
        per_token_ms=per_token_ms,
        transfer_ms=transfer_s * 1e3,
        bytes_per_rank=per_rank,
        effective_gbs=per_rank / (total_ms * 1e6) if per_rank and total_ms else 0.0,
        basis=basis,
        hit_correction_ms=path.hit_correction_ms,
    )


def reload_ms(
    shape: ModelShape, *, engine: str, tier: str, gpu: str, tp: int, tokens: int
) -> float:
    """:func:`reload` ``.total_ms`` (same arguments and errors)."""
    return reload(shape, engine=engine, tier=tier, gpu=gpu, tp=tp, tokens=tokens).total_ms
