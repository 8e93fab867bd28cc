"""The performance model's measured constants, and which GPUs, engines and tiers they cover.

The constants live in ``sizing/data/performance.json``, each with the measurement it
was fitted on (an id of the published points in ``docs/accuracy.md``, "TTFT") and the
arithmetic of the fit. A GPU, engine or tier without a constant has no measured basis:
the functions raise :class:`NoMeasuredBasis` rather than extrapolate silently.

GPU classes: a prefill efficiency is measured on one card and applies to the cards that
run the same kernels on the same silicon (H100 SXM, PCIe and NVL, H200 share the GH100
die). A class may list cards it is *transferred* to (B200: no public single-request
prefill measurement); a result on such a card says so in its :attr:`Basis.note`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from sizing.data_files import data_text
from sizing.errors import SizingError

ENGINES = ("vllm", "lmcache", "sglang", "dynamo")
"""Engines a reload can be asked for: vLLM native offloading (``OffloadingConnector``),
LMCache, SGLang HiCache and NVIDIA Dynamo KVBM."""

TIERS = ("gpu", "cpu", "nvme", "shared")
"""Where a hit comes from: the GPU prefix cache, the CPU-memory tier, local NVMe (read
through the CPU tier) and a shared network store (NFS/pNFS, S3, a KV store)."""


class NoMeasuredBasis(SizingError):
    """No measurement covers this GPU, engine or tier: the model does not extrapolate.

    ``field`` is ``gpu``, ``engine`` or ``tier``; ``code`` is ``no_measured_basis`` and
    ``values`` holds ``what`` (the English phrase after "no measured basis for").
    """

    def __init__(self, field: str, what: str) -> None:
        super().__init__(
            field,
            f"no measured basis for {what}",
            code="no_measured_basis",
            values={"what": what},
        )


@dataclass(frozen=True)
class Basis:
    """Which measurement a figure rests on.

    Attributes:
        sources: ids of the published points the constants were fitted on.
        note: what the reader should know (a transfer to another card), else ``""``.
    """

    sources: tuple[str, ...]
    note: str = ""

    def joined(self, other: Basis) -> Basis:
        """Both bases, sources in order without repeats, notes joined."""
        if not other.sources and not other.note:
            return self
        return _joined(self, other)


@lru_cache(maxsize=256)
def _joined(a: Basis, b: Basis) -> Basis:
    sources = tuple(dict.fromkeys(a.sources + b.sources))
    note = "; ".join(dict.fromkeys(n for n in (a.note, b.note) if n))
    return Basis(sources, note)


@dataclass(frozen=True)
class PrefillClass:
    """A GPU class's measured prefill constants.

    Attributes:
        name: the class (``hopper``, ``h20``, ``rtx-pro-blackwell``).
        linear_efficiency: share of the dense tensor rate the weight matrix multiplies
            reach in a long prefill.
        attention_efficiency: share of the 16-bit dense rate causal attention reaches.
        fixed_ms: per-request time beyond the compute (scheduling, launch, sampling).
        basis: the measurements.
    """

    name: str
    linear_efficiency: float
    attention_efficiency: float
    fixed_ms: float
    basis: Basis


@dataclass(frozen=True)
class ReloadPath:
    """One engine's path from one tier to the GPU.

    Attributes:
        fixed_ms: per-request cost of the copy beyond its bytes (≥ 0).
        per_token_us: per cached token cost beyond the bytes (block lookups and the
            per-block copy set-up), µs.
        link: ``pcie`` (each rank's own host link at the measured pinned rate) or
            ``network`` (the rate below).
        link_efficiency: share of the link rate the engine's copies reach.
        gbs_per_rank: effective rate of one rank, GB/s, for a network path (``None``
            for PCIe).
        gbs_per_instance: a rate the whole engine instance cannot exceed whatever its
            TP (one copy process, one NIC), GB/s, or ``None``.
        hit_correction_ms: added to the TTFT of a hit on this path, not to the copy: the
            fit's difference between a hit's one-token prefill and the GPU class's miss
            fit (can be negative).
        basis: the measurements.
    """

    fixed_ms: float
    per_token_us: float
    link: str
    link_efficiency: float
    gbs_per_rank: float | None
    gbs_per_instance: float | None
    basis: Basis
    hit_correction_ms: float = 0.0


@cache
def data() -> dict[str, Any]:
    """The parsed ``sizing/data/performance.json``."""
    text = data_text("performance.json")
    parsed: dict[str, Any] = json.loads(text)
    return parsed


@cache
def _classes() -> dict[str, PrefillClass]:
    out: dict[str, PrefillClass] = {}
    for name, c in data()["prefill_classes"].items():
        basis = Basis(tuple(c["fitted_on"]))
        for slug in c["gpus"]:
            out[slug] = PrefillClass(
                name, c["linear_efficiency"], c["attention_efficiency"], c["fixed_ms"], basis
            )
        for slug, note in c.get("transferred_to", {}).items():
            out[slug] = PrefillClass(
                name,
                c["linear_efficiency"],
                c["attention_efficiency"],
                c["fixed_ms"],
                Basis(basis.sources, note),
            )
    return out


def prefill_class(gpu_slug: str, gpu_name: str = "") -> PrefillClass:
    """The measured prefill constants that apply to ``gpu_slug``.

    Raises:
        NoMeasuredBasis: on field ``gpu`` when no class covers the card.
    """
    try:
        return _classes()[gpu_slug]
    except KeyError:
        raise NoMeasuredBasis("gpu", f"prefill on {gpu_name or gpu_slug}") from None


@lru_cache(maxsize=64)
def reload_path(engine: str, tier: str) -> ReloadPath:
    """The measured reload constants of ``engine`` from ``tier``.

    Raises:
        NoMeasuredBasis: on field ``engine`` for an unknown engine and on field
            ``tier`` when no measurement covers that engine's path from that tier.
    """
    if engine not in ENGINES:
        raise NoMeasuredBasis("engine", f"engine {engine!r} (known: {', '.join(ENGINES)})")
    if tier not in TIERS:
        raise NoMeasuredBasis("tier", f"tier {tier!r} (known: {', '.join(TIERS)})")
    paths = data()["reload"].get(engine, {})
    p = paths.get(tier)
    if p is None:
        raise NoMeasuredBasis("tier", f"{ENGINE_NAMES[engine]} hits from the {TIER_NAMES[tier]}")
    return ReloadPath(
        fixed_ms=float(p["fixed_ms"]),
        per_token_us=float(p["per_token_us"]),
        link=p["link"],
        link_efficiency=float(p.get("link_efficiency", 1.0)),
        gbs_per_rank=p.get("gbs_per_rank"),
        gbs_per_instance=p.get("gbs_per_instance"),
        basis=Basis(tuple(p["fitted_on"]), p.get("note", "")),
        hit_correction_ms=float(p.get("hit_correction_ms", 0.0)),
    )


ENGINE_NAMES = {
    "vllm": "vLLM native offloading",
    "lmcache": "LMCache",
    "sglang": "SGLang HiCache",
    "dynamo": "Dynamo KVBM",
}
TIER_NAMES = {
    "gpu": "GPU prefix cache",
    "cpu": "CPU tier",
    "nvme": "NVMe tier",
    "shared": "shared tier",
}


@lru_cache(maxsize=64)
def missing_path(engine: str, tier: str) -> str:
    """The "no measured basis for …" sentence when ``engine`` has no measured path from
    ``tier``, else ``""`` (a check without raising)."""
    try:
        reload_path(engine, tier)
    except NoMeasuredBasis as exc:
        return exc.message
    return ""


def citation(measurement_id: str) -> str:
    """What the published point ``measurement_id`` is and where it was published."""
    return str(data()["measurements"].get(measurement_id, measurement_id))


@lru_cache(maxsize=64)
def constant(*keys: str) -> float:
    """A scalar constant of the data file by its key path (``decode``, ``memory_efficiency``)."""
    node: Any = data()
    for key in keys:
        node = node[key]
    return float(node)
