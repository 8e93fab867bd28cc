"""The performance model's measured constants, and which GPUs, engines and tiers they cover.

The constants live in ``sizing/data/performance.json``, each with the measurement it
was fitted on (an id of the published points in ``docs/accuracy.md``, "TTFT") and the
arithmetic of the fit. A GPU, engine or tier without a constant has no measured basis:
the functions raise :class:`NoMeasuredBasis` rather than extrapolate silently.

GPU classes: a prefill efficiency is measured on one card and applies to the cards that
run the same kernels on the same silicon (H100 SXM, PCIe and NVL, H200 share the GH100
die). Every catalog card belongs to an architecture family (Ampere, Ada, Hopper,
Blackwell, CDNA 3, CDNA 4; ``families`` in the data file). A card without its own
measurement is estimated from its family's measured class, or from the nearest measured
class when no card of its family is measured, and carries a band (``band_pct``: how far
its prefill time may lie from the estimate either way, fitted as the spread between
measured classes, ``families.band_fit``); its :attr:`Basis.note` says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
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
        band_pct: for a figure estimated from another card's measurement, how far it may
            lie from the estimate either way, % (the time is within estimate ÷ (1 + band)
            and estimate × (1 + band)); ``None`` for a figure measured on its own card.
    """

    sources: tuple[str, ...]
    note: str = ""
    band_pct: float | None = None

    def joined(self, other: Basis) -> Basis:
        """Both bases, sources in order without repeats, notes joined."""
        if not other.sources and not other.note and other.band_pct is None:
            return self
        return _joined(self, other)

    def range_ms(self, value_ms: float) -> tuple[float, float] | None:
        """``value_ms`` ÷ (1 + band) and × (1 + band), or ``None`` without a band."""
        if self.band_pct is None:
            return None
        factor = 1 + self.band_pct / 100
        return value_ms / factor, value_ms * factor


@lru_cache(maxsize=256)
def _joined(a: Basis, b: Basis) -> Basis:
    sources = tuple(dict.fromkeys(a.sources + b.sources))
    note = "; ".join(dict.fromkeys(n for n in (a.note, b.note) if n))
    bands = [x for x in (a.band_pct, b.band_pct) if x is not None]
    return Basis(sources, note, max(bands) if bands else None)


@dataclass(frozen=True)
class PrefillClass:
    """A GPU class's measured prefill constants.

    Attributes:
        name: the class (``hopper``, ``h20``, ``rtx-pro-blackwell``).
        family: the architecture family of the card it applies to (``ampere``, ``ada``,
            ``hopper``, ``blackwell``, ``cdna3``, ``cdna4``).
        linear_efficiency: share of the dense tensor rate the weight matrix multiplies
            reach in a long prefill.
        attention_efficiency: share of the 16-bit dense rate causal attention reaches.
        fixed_ms: per-request time beyond the compute (scheduling, launch, sampling).
        basis: the measurements.
    """

    name: str
    family: str
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
        measured_tp: the TP sizes the path's measurements were taken at (empty when the
            source does not say).
    """

    fixed_ms: float
    per_token_us: float
    link: str
    link_efficiency: float
    gbs_per_rank: float | None
    gbs_per_instance: float | None
    basis: Basis
    hit_correction_ms: float = 0.0
    measured_tp: tuple[int, ...] = ()

    def at_tp(self, engine: str, tier: str, tp: int) -> Basis:
        """The path's basis at TP ``tp``: with a note when no measurement of the path was
        taken at that TP (the per-rank fit is applied as it is; what a hit costs at that TP
        beyond its bytes, the ranks' completion and scheduling, is not measured)."""
        if not self.measured_tp or tp in self.measured_tp:
            return self.basis
        measured = ", ".join(str(t) for t in self.measured_tp)
        note = (
            f"no {ENGINE_NAMES[engine]} hit from the {TIER_NAMES[tier]} is measured at TP {tp} "
            f"(measured at TP {measured}): the per-rank fit is applied, and what a hit costs "
            "beyond its bytes at this TP (the ranks' completion, scheduling) is not in the figure"
        )
        return self.basis.joined(Basis((), note))


@cache
def data() -> dict[str, Any]:
    """The parsed ``sizing/data/performance.json``."""
    text = data_text("performance.json")
    parsed: dict[str, Any] = json.loads(text)
    return parsed


FAMILY_NAMES = {
    "ampere": "Ampere",
    "ada": "Ada",
    "hopper": "Hopper",
    "blackwell": "Blackwell",
    "cdna3": "CDNA 3",
    "cdna4": "CDNA 4",
}
"""The architecture families' names as the sentences print them."""


@cache
def _measured() -> dict[str, PrefillClass]:
    """Each measured class by its name."""
    return {
        name: PrefillClass(
            name,
            c["family"],
            c["linear_efficiency"],
            c["attention_efficiency"],
            c["fixed_ms"],
            Basis(tuple(c["fitted_on"])),
        )
        for name, c in data()["prefill_classes"].items()
    }


@cache
def _classes() -> dict[str, tuple[PrefillClass, str]]:
    """Each card's class, and for a card estimated from another class the name of the
    card that class was measured on (``""`` for a measured card)."""
    out: dict[str, tuple[PrefillClass, str]] = {}
    for name, c in data()["prefill_classes"].items():
        for slug in c["gpus"]:
            out[slug] = (_measured()[name], "")
    for family, f in data()["families"].items():
        if family.startswith("_") or not isinstance(f, dict):
            continue
        source = _measured()[f["estimated_from"]]
        measured_on = data()["prefill_classes"][f["estimated_from"]]["measured_on"]
        basis = Basis(source.basis.sources, "", float(f["band_pct"]))
        for slug in f["gpus"]:
            out[slug] = (
                PrefillClass(
                    source.name,
                    family,
                    source.linear_efficiency,
                    source.attention_efficiency,
                    source.fixed_ms,
                    basis,
                ),
                measured_on,
            )
    return out


def prefill_class(gpu_slug: str, gpu_name: str = "") -> PrefillClass:
    """The prefill constants that apply to ``gpu_slug``: its own measured class, or for a
    card without one its family's estimate with the band and a note saying so.

    Raises:
        NoMeasuredBasis: on field ``gpu`` when no class or family covers the card.
    """
    try:
        cls, measured_on = _classes()[gpu_slug]
    except KeyError:
        raise NoMeasuredBasis("gpu", f"prefill on {gpu_name or gpu_slug}") from None
    if not measured_on:
        return cls
    return _estimated(cls, gpu_name or gpu_slug, measured_on)


@lru_cache(maxsize=64)
def _estimated(cls: PrefillClass, gpu_name: str, measured_on: str) -> PrefillClass:
    band = cls.basis.band_pct
    note = (
        f"no single-request prefill measurement on {gpu_name} ({FAMILY_NAMES[cls.family]} "
        f"family): the efficiencies measured on {measured_on} are applied to its datasheet "
        f"rates, ±{band:g} %"
    )
    return replace(cls, basis=replace(cls.basis, note=note))


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
        estimate = data()["estimated_paths"].get(engine, {}).get(tier)
        if estimate is None:
            raise NoMeasuredBasis(
                "tier", f"{ENGINE_NAMES[engine]} hits from the {TIER_NAMES[tier]}"
            )
        return _estimated_path(engine, tier, estimate["from"], float(estimate["band_pct"]))
    return ReloadPath(
        fixed_ms=float(p["fixed_ms"]),
        per_token_us=float(p["per_token_us"]),
        link=p["link"],
        link_efficiency=float(p.get("link_efficiency", 1.0)),
        gbs_per_rank=p.get("gbs_per_rank"),
        gbs_per_instance=p.get("gbs_per_instance"),
        basis=Basis(tuple(p["fitted_on"]), p.get("note", "")),
        hit_correction_ms=float(p.get("hit_correction_ms", 0.0)),
        measured_tp=tuple(int(t) for t in p.get("measured_tp", ())),
    )


def _estimated_path(engine: str, tier: str, source: str, band_pct: float) -> ReloadPath:
    """``source``'s measured path from ``tier``, standing in for ``engine``'s: its basis
    carries the band and a note naming both engines (``estimated_paths`` in the data)."""
    measured = reload_path(source, tier)
    note = (
        f"no {ENGINE_NAMES[engine]} hit from the {TIER_NAMES[tier]} is measured: "
        f"{ENGINE_NAMES[source]}'s measured path is applied, ±{band_pct:g} %"
    )
    basis = Basis(measured.basis.sources, note, band_pct)
    return replace(measured, basis=basis, measured_tp=())


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
