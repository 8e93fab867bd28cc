"""Recommend the cheapest configurations for a workload, priced from the price list.

The search itself is :mod:`sizing.search.cheapest`; this module resolves the model, prices each
configuration's BOM from the price list in force exactly as a quote totals it
(:func:`configurator.catalog.services.bom_net_eur`), and shapes the answer for the page,
the presales workspace, the CLI and the API.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext, override

from configurator.catalog.models import Price
from configurator.catalog.services import bom_net_eur, priced_gpu_slugs, prices_on
from configurator.planning.bindings import binding_words
from configurator.planning.services import model_spec
from sizing.bom.lines import Bom
from sizing.errors import SizingError
from sizing.hardware import catalog
from sizing.model.spec import ModelSpec
from sizing.plan.orchestrator import Plan, PlanRequest
from sizing.search.cheapest import TPOT_TARGET, TTFT_TARGET, Recommendation, recommend
from sizing.search.configuration import Configuration, tier_gib
from sizing.search.nearest import RelaxedTargets
from sizing.search.pareto import pareto_axis
from sizing.search.space import LAYOUT_FIELDS
from sizing.search.tradeoffs import Reason, reasons
from sizing.workload import Workload, stored_inputs

RATIO = Decimal("0.01")


def layout_form_data(inputs: Mapping[str, object]) -> dict[str, str]:
    """The layout fields of stored ``inputs`` (:data:`LAYOUT_FIELDS`) as a form posts
    them: a number or text as written, a switch that is on as ``"on"``; an empty value
    (the plan's own rule) and a switch that is off are left out, as a form leaves them."""
    return {
        key: "on" if value is True else str(value)
        for key in LAYOUT_FIELDS
        if (value := inputs[key]) is not None and value is not False
    }


@dataclass(frozen=True)
class Recommended:
    """One configuration of a recommendation, priced and explained.

    Attributes:
        config: the configuration (plan, BOM, price in EUR net).
        reasons: why it is listed (:func:`sizing.search.tradeoffs.reasons`).
        relative_cost: its price over the cheapest one's (1.00 for the cheapest).
        inputs: stored inputs that size it again (``planning.services.plan_stored``).
        ttft_p95_target_ms, tpot_target_ms: the customer's targets it is judged by, ms.
    """

    config: Configuration[Decimal]
    reasons: tuple[Reason, ...]
    relative_cost: Decimal
    inputs: dict[str, Any]
    ttft_p95_target_ms: float
    tpot_target_ms: float

    @property
    def price_net_eur(self) -> Decimal:
        """The BOM's net list price, EUR."""
        return self.config.price

    @property
    def layout_form_data(self) -> dict[str, str]:
        """The layout as a form posts it (:func:`layout_form_data`)."""
        return layout_form_data(self.inputs)

    @property
    def why(self) -> str:
        """The reasons as English sentences."""
        return " ".join(r.text for r in self.reasons)

    def summary(self) -> dict[str, Any]:
        """The JSON contract of one configuration (``docs/cli.md``, ``recommend``)."""
        c = self.config
        plan = c.plan
        return {
            # the layout searched, as the Workload fields that size it again (LAYOUT_FIELDS)
            **{name: getattr(plan.request.workload, name) for name in LAYOUT_FIELDS},
            "tensor_parallel_size": plan.parallelism.tensor_parallel_size,
            "gpu_name": plan.gpu.name,
            "nodes": plan.parallelism.nodes,
            "replicas": plan.parallelism.total_replicas,
            "host_memory_gb": plan.host.total_gb,
            "dimm_count": plan.host.dimm_count,
            "dimm_gb": plan.host.dimm_gb,
            "cpu_tier_gib": round(tier_gib(c), 2),
            "conversations_on_gpus": c.resident_conversations,
            "nvme_tb": round(c.nvme_tb, 2),
            "nvme_drive_count": plan.nvme.drive_count if plan.nvme.drive else 0,
            "shared_tier_tb": round(c.shared_tier_tb, 2),
            "ttft_p95_ms": None if c.ttft_p95_ms is None else round(c.ttft_p95_ms, 1),
            "tpot_ms": None if c.tpot_ms is None else round(c.tpot_ms, 1),
            "cpu_hit_rate": None if c.cpu_hit_rate is None else round(c.cpu_hit_rate, 4),
            "price_net_eur": str(c.price),
            "relative_cost": float(self.relative_cost),
            "ttft_p95_target_ms": round(self.ttft_p95_target_ms, 1),
            "tpot_target_ms": round(self.tpot_target_ms, 1),
            "meets_targets": c.meets_targets,
            "why": self.why,
            "why_codes": [{"code": r.code, "values": dict(r.values)} for r in self.reasons],
        }


@dataclass(frozen=True)
class RecommendationResult:
    """A priced recommendation for one workload.

    Attributes:
        configurations: the cheapest that meet the workload, cheapest first.
        pareto: the front of price against the second axis, cheapest first.
        axis: the front's second axis (``sizing.search.pareto.pareto_axis``).
        reference: the requested layout, priced (``None`` if it cannot be built).
        binding: when nothing meets the workload, the target or limit that binds.
        nearest: then the configuration that comes closest.
        dram_with_tier / dram_without_tier: the cheapest with and without a CPU tier.
        evaluated: configurations sized.
        priced_on: the date of the price list used.
        ttft_p95_target_ms / tpot_target_ms: the workload's latency targets, ms.
        relaxed: when no configuration can meet a latency target, the one target every
            listed configuration is sized for (``sizing.search.nearest.RelaxedTargets``).
    """

    configurations: tuple[Recommended, ...]
    pareto: tuple[Recommended, ...]
    axis: str
    reference: Recommended | None
    binding: str | None
    nearest: Recommended | None
    dram_with_tier: Recommended | None
    dram_without_tier: Recommended | None
    evaluated: int
    priced_on: dt.date
    ttft_p95_target_ms: float
    tpot_target_ms: float
    relaxed: RelaxedTargets | None = None

    @property
    def relaxed_text(self) -> str | None:
        """The sentence said once when the configurations listed meet one relaxed target
        instead of the customer's, in the active language; ``None`` otherwise."""
        if self.relaxed is None:
            return None
        used = []
        if self.relaxed.ttft_p95_ms is not None:
            used.append(binding_words(TTFT_TARGET, ttft_p95_ms=self.relaxed.ttft_p95_ms, tpot_ms=0))
        if self.relaxed.tpot_ms is not None:
            used.append(binding_words(TPOT_TARGET, ttft_p95_ms=0, tpot_ms=self.relaxed.tpot_ms))
        return gettext(
            "No configuration meets %(binding)s: on every one a request takes more than "
            "two thirds of it even without any load. The configurations below are sized "
            "for one relaxed target for all, %(used)s, and their figures are shown as "
            "they are."
        ) % {"binding": self.binding_text, "used": gettext(" and ").join(used)}

    @property
    def binding_text(self) -> str | None:
        """What binds in the customer's words (``bindings.binding_words``); ``None`` when
        something meets the workload."""
        if self.binding is None:
            return None
        return binding_words(
            self.binding, ttft_p95_ms=self.ttft_p95_target_ms, tpot_ms=self.tpot_target_ms
        )

    @property
    def dram_target_ms(self) -> int | None:
        """The TTFT p95 target the cheapest configuration without a tier meets, ms (the
        workload's, or the relaxed default its plan states); ``None`` without one."""
        without = self.dram_without_tier
        serving = None if without is None else without.config.serving
        return None if serving is None else round(float(serving.ttft_p95_target_ms))

    @property
    def dram_saving_eur(self) -> Decimal | None:
        """What the CPU tier saves, EUR: the price of the cheapest configuration that
        meets the same targets without a CPU tier (sized by the same search,
        ``sizing.search.cheapest.Recommendation.without_tier``) less the cheapest with one;
        ``None`` when either is missing or the tier saves nothing."""
        if self.dram_with_tier is None or self.dram_without_tier is None:
            return None
        saving = self.dram_without_tier.price_net_eur - self.dram_with_tier.price_net_eur
        return saving if saving > 0 else None

    @property
    def below_reference_eur(self) -> Decimal | None:
        """How much less the cheapest costs than the requested layout, EUR."""
        if not self.configurations or self.reference is None:
            return None
        return self.reference.price_net_eur - self.configurations[0].price_net_eur

    def to_json(self) -> dict[str, Any]:
        """``{"configurations": [...], "pareto": [...], ...}``; keys in ``docs/cli.md``."""

        def one(r: Recommended | None) -> dict[str, Any] | None:
            return None if r is None else r.summary()

        saving = self.dram_saving_eur
        with override("en"):  # the JSON contract is English, as the reasons are
            binding_text = self.binding_text
            relaxed_text = self.relaxed_text
        relaxed = self.relaxed
        return {
            "configurations": [r.summary() for r in self.configurations],
            "pareto": [r.summary() for r in self.pareto],
            "pareto_axis": self.axis,
            "reference": one(self.reference),
            "binding": self.binding,
            "binding_text": binding_text,
            "nearest": one(self.nearest),
            "relaxed_targets": None
            if relaxed is None
            else {"ttft_p95_ms": relaxed.ttft_p95_ms, "tpot_ms": relaxed.tpot_ms},
            "relaxed_text": relaxed_text,
            "dram_instead_of_gpus": {
                "with_cpu_tier": one(self.dram_with_tier),
                "without_cpu_tier": one(self.dram_without_tier),
                "saving_eur": None if saving is None else str(saving),
            },
            "evaluated": self.evaluated,
            "priced_on": self.priced_on.isoformat(),
        }


def _gpu_slugs(gpus: Sequence[str] | None, prices: Mapping[str, Price]) -> list[str]:
    """The GPU types to search: all priced ones, or the given ones (each checked).

    Raises:
        SizingError: on field ``gpus`` for an unknown or unpriced GPU, or none priced.
    """
    priced = priced_gpu_slugs(prices)
    if not gpus:
        if not priced:
            raise SizingError(
                "gpus",
                "the price list carries no GPU: load or enter prices first",
                code="no_priced_gpu",
            )
        return priced
    for slug in gpus:
        try:
            catalog.gpu(slug)
        except SizingError as exc:
            # the catalog's error and wording, at this command's input
            raise SizingError(
                "gpus", template=exc.template, code=exc.code, values=dict(exc.values)
            ) from None
        if slug not in priced:
            raise SizingError(
                "gpus",
                f"GPU '{slug}' has no price in the price list; priced GPUs: {', '.join(priced)}",
                code="gpu_unpriced",
                values={"gpu": slug, "priced": ", ".join(priced)},
            )
    return list(dict.fromkeys(gpus))


def recommendation_create(
    workload: Workload,
    *,
    revision: str | None = None,
    private_config: Mapping[str, Any] | None = None,
    private_weights_gib: float | None = None,
    gpus: Sequence[str] | None = None,
    day: dt.date | None = None,
    top: int = 3,
    prices: Mapping[str, Price] | None = None,
    model: ModelSpec | None = None,
    plan: Plan | None = None,
) -> RecommendationResult:
    """The cheapest configurations for the workload, priced from the price list.

    The model arguments are those of :func:`configurator.planning.services.plan_create`;
    the workload's GPU and count are the reference layout, ``kv_dtype`` ``fp8`` allows an
    FP8 cache. ``gpus`` limits the GPU types (default: every GPU the price list carries);
    ``day`` picks the price list in force (default today); ``prices`` replaces it;
    ``model`` replaces the look-up of ``workload.model`` (an uploaded config); ``plan``
    is the workload's own plan when the caller has made it already (the page's form): the
    requested layout is then not sized again (ignored unless it is of the same request).

    Raises:
        SizingError: naming the input that cannot be sized (``gpus`` for a GPU the price
            list does not carry).
    """
    day = day or timezone.localdate()
    prices = prices_on(day) if prices is None else prices
    slugs = _gpu_slugs(gpus, prices)
    stored = stored_inputs(
        workload, private_config=private_config, private_weights_gib=private_weights_gib
    )
    spec = model_spec(
        model=model,
        model_id=workload.model,
        revision=revision,
        private_config=private_config,
        private_weights_gib=private_weights_gib,
    )
    request = PlanRequest(model=spec, workload=workload)

    def price(bom: Bom) -> Decimal | None:
        return bom_net_eur(bom, prices)

    same = plan if plan is not None and plan.request == request else None
    rec = recommend(request, gpu_slugs=slugs, price=price, top=top, plan=same)
    return _result(rec, stored, day, request)


def _result(
    rec: Recommendation[Decimal], workload: dict[str, Any], day: dt.date, request: PlanRequest
) -> RecommendationResult:
    base = rec.cheapest[0].price if rec.cheapest else None

    def wrap(config: Configuration[Decimal] | None) -> Recommended | None:
        if config is None:
            return None
        relative = (config.price / base).quantize(RATIO, ROUND_HALF_UP) if base else Decimal(1)
        inputs = {**workload, **config.plan.request.workload.to_json()}
        return Recommended(
            config,
            reasons(config, rec),
            relative,
            inputs,
            ttft_p95_target_ms=request.traffic.ttft_p95_ms,
            tpot_target_ms=request.traffic.tpot_ms,
        )

    with_tier, without = rec.dram_trade
    return RecommendationResult(
        configurations=tuple(r for c in rec.cheapest if (r := wrap(c))),
        pareto=tuple(r for c in rec.pareto if (r := wrap(c))),
        axis=pareto_axis(rec.pareto),
        reference=wrap(rec.reference),
        binding=rec.binding,
        nearest=wrap(rec.nearest),
        dram_with_tier=wrap(with_tier),
        dram_without_tier=wrap(without),
        evaluated=rec.evaluated,
        priced_on=day,
        ttft_p95_target_ms=request.traffic.ttft_p95_ms,
        tpot_target_ms=request.traffic.tpot_ms,
        relaxed=rec.relaxed,
    )
