"""The quote document: everything the quote page and the PDF show, as JSON-safe data.

A draft's document is built from its rows and the latest verification report; an issued
quote's document is its snapshot, so it re-renders identically. Its shape is
:class:`configurator.quotes.document_types.QuoteDocument`; money is kept as decimal
strings (``"1234.50"``) and turned back into ``Decimal`` for templates.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any, ParamSpec, TypeVar, cast

from django.utils import timezone, translation

from configurator.catalog.models import Price
from configurator.inquiries import traffic_chart, ttft_chart
from configurator.quotes.deviations import alternative_plan, deviation_texts, plan_deviations
from configurator.quotes.document_types import (
    DocumentAlternative,
    DocumentLine,
    QuoteDocument,
    Totals,
)
from configurator.quotes.engine_appendix import engine_appendix, engine_appendix_of
from configurator.quotes.models import Quote, QuoteAlternative, compute_totals
from configurator.quotes.pricing import PricedLine
from configurator.quotes.terms import vat_rate
from configurator.quotes.verification_reader import latest_verification
from configurator.version import engine_version
from sizing.hardware.catalog import nvme_drives
from sizing.memory.residency import Placement, placement
from sizing.units import GIB, TB, whole_gib

MONEY_KEYS = ("unit_price_eur", "unit_cost_eur", "total_eur")


def _alternative(
    *,
    label: str,
    inputs: dict[str, Any],
    summary: dict[str, Any],
    lines: list[DocumentLine],
    discount_percent: Decimal,
    deviations: list[str] | None = None,
    engine: dict[str, Any] | None,
) -> DocumentAlternative:
    rows = [
        (int(ln["quantity"]), Decimal(ln["unit_price_eur"]), Decimal(ln["unit_cost_eur"]))
        for ln in lines
    ]
    totals = compute_totals(rows, discount_percent=discount_percent, vat_rate=vat_rate())
    drive = next((d for d in nvme_drives() if d.model == summary.get("nvme_drive")), None)
    count = int(summary.get("nvme_drive_count") or 0)
    return {
        "label": label,
        "inputs": inputs,
        "summary": summary,
        "nvme_capacity_tb": round(drive.capacity_tb * count, 2) if drive else 0.0,
        "lines": lines,
        "totals": Totals(
            subtotal=str(totals["subtotal"]),
            discount=str(totals["discount"]),
            net=str(totals["net"]),
            vat=str(totals["vat"]),
            gross=str(totals["gross"]),
            cost=str(totals["cost"]),
            margin=str(totals["margin"]),
            margin_percent=str(totals["margin_percent"]),
        ),
        "deviations": deviations or [],
        "engine": engine,
    }


def _line(
    *,
    position: int,
    sku: str,
    description: str,
    category: str,
    quantity: int,
    unit_price_eur: Decimal,
    unit_cost_eur: Decimal,
    why: str,
    is_example: bool = False,
    customer_provides: bool = False,
) -> DocumentLine:
    return {
        "position": position,
        "sku": sku,
        "description": description,
        "category": category,
        "quantity": quantity,
        "unit_price_eur": str(unit_price_eur),
        "unit_cost_eur": str(unit_cost_eur),
        "total_eur": str((Decimal(quantity) * unit_price_eur).quantize(Decimal("0.01"))),
        "why": why,
        "is_example": is_example and not customer_provides,
        "customer_provides": customer_provides,
    }


def document_from_quote(quote: Quote, *, live: bool = False) -> QuoteDocument:
    """The document of ``quote``: its snapshot when issued (unless ``live``), else built
    from its rows now.

    Each alternative carries ``deviations``: where its lines fall short of its sizing
    plan, in the quote's language (:mod:`configurator.quotes.deviations`).
    """
    if quote.is_issued and quote.snapshot and not live:
        return cast(QuoteDocument, dict(quote.snapshot))  # stored by quote_issue
    alternatives = []
    # One query for the alternatives and one for their lines, and one plan for each
    # alternative (its deviations and its engine appendix both read it).
    alts = list(quote.alternatives.prefetch_related("lines"))
    examples = _example_skus(alts)
    for alt in alts:
        plan = alternative_plan(alt)
        lines = [
            _line(
                position=n,
                sku=ln.sku,
                description=ln.description_in(quote.language),
                category=ln.category,
                quantity=ln.quantity,
                unit_price_eur=ln.unit_price_eur,
                unit_cost_eur=ln.unit_cost_eur,
                why=ln.why_in(quote.language),
                is_example=ln.sku in examples,
                customer_provides=ln.customer_provides,
            )
            for n, ln in enumerate(alt.lines.all(), start=1)
        ]
        alternatives.append(
            _alternative(
                label=alt.label_in(quote.language),
                inputs=alt.inputs,
                summary=alt.plan_summary,
                lines=lines,
                discount_percent=quote.discount_percent,
                deviations=_in_language(
                    quote.language, deviation_texts, plan_deviations(alt, plan)
                ),
                engine=None if plan is None else engine_appendix_of(plan),
            )
        )
    issued = timezone.localdate(quote.issued_at) if quote.issued_at else timezone.localdate()
    inquiry = quote.inquiry
    return {
        "status": quote.status,
        "number": quote.number,
        "language": quote.language,
        "customer": {
            "name": quote.customer_name,
            "company": quote.customer_company,
            "email": quote.customer_email,
        },
        "inquiry_reference": inquiry.reference if inquiry else None,
        "date": issued.isoformat(),
        "valid_until": quote.valid_until.isoformat() if quote.valid_until else None,
        "discount_percent": str(quote.discount_percent),
        "vat_rate": str(vat_rate()),
        "engine_version": quote.engine_version or engine_version(),
        "notes": quote.notes,
        "example_prices": any(ln["is_example"] for alt in alternatives for ln in alt["lines"]),
        "alternatives": alternatives,
        "verification": latest_verification(quote, quote.language),
    }


P = ParamSpec("P")
R = TypeVar("R")


def _in_language(language: str, func: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``func(*args, **kwargs)`` with ``language`` active."""
    with translation.override(language):
        return func(*args, **kwargs)


def _example_skus(alternatives: list[QuoteAlternative]) -> set[str]:
    """The SKUs of the ``alternatives``' lines whose price-list entry is marked as an
    example."""
    skus = {ln.sku for alt in alternatives for ln in alt.lines.all()}
    return set(Price.objects.filter(sku__in=skus, is_example=True).values_list("sku", flat=True))


def document_from_plans(
    *,
    customer: str,
    language: str,
    alternatives: list[tuple[str, dict[str, Any], dict[str, Any], list[PricedLine]]],
    today: dt.date,
) -> QuoteDocument:
    """A DRAFT document for the command line: (label, inputs, summary, priced lines)."""
    alts = [
        _alternative(
            label=label,
            inputs=inputs,
            summary=summary,
            lines=[
                _line(
                    position=n,
                    sku=ln.sku,
                    description=ln.description,
                    category=ln.category,
                    quantity=ln.quantity,
                    unit_price_eur=ln.unit_price_eur,
                    unit_cost_eur=ln.unit_cost_eur,
                    why=ln.why,
                    is_example=ln.is_example,
                )
                for n, ln in enumerate(lines, start=1)
            ],
            discount_percent=Decimal("0.00"),
            engine=engine_appendix(inputs),
        )
        for label, inputs, summary, lines in alternatives
    ]
    return {
        "status": "draft",
        "number": None,
        "language": language,
        "customer": {"name": customer, "company": "", "email": ""},
        "inquiry_reference": None,
        "date": today.isoformat(),
        "valid_until": None,  # a draft has no validity yet: it starts when issued
        "discount_percent": "0.00",
        "vat_rate": str(vat_rate()),
        "engine_version": engine_version(),
        "notes": "",
        "example_prices": any(ln.is_example for *_x, lines in alternatives for ln in lines),
        "alternatives": alts,
        "verification": None,
    }


def tiers_chart(alternative: DocumentAlternative) -> dict[str, Any]:
    """Bar lengths (0-100, logarithmic) and labels for the memory-tier chart.

    Tiers: the KV cache on all GPUs, the CPU-memory tier and the NVMe tier, each in GiB
    with the conversations resting there; tiers of 0 GiB are left out. The shared tier
    (for all nodes, the summary's ``shared_tier_tb``) is drawn when conversations rest
    in it beyond a cut CPU tier. The counts are the plan's own
    (:func:`sizing.memory.residency.placement`, the summary's ``conversations_resident``,
    ``conversations_in_cpu_tier``, ``conversations_on_nvme`` and
    ``conversations_in_shared_tier``), the same the estimate's chart and the e-mail
    show; a snapshot issued before the summary carried them is counted by the same
    function.
    """
    summary = alternative["summary"]
    gpus = int(summary.get("gpus_per_node") or 0)
    gpu_gib = float(summary.get("kv_cache_gib_per_gpu") or 0) * gpus
    cpu_gib = float(summary.get("cpu_tier_total_gib") or 0)
    nvme_gib = float(alternative.get("nvme_capacity_tb") or 0) * TB / GIB
    where = _placement(alternative)
    shared_gib = float(summary.get("shared_tier_tb") or 0) * TB / GIB
    counts = {
        "gpu": where.on_gpus,
        "cpu": where.in_cpu_tier,
        "nvme": where.nvme_total,
        "shared": where.in_shared_tier,
    }
    tiers = [("gpu", gpu_gib), ("cpu", cpu_gib), ("nvme", nvme_gib)]
    if where.in_shared_tier:
        tiers.append(("shared", shared_gib))
    tiers = [(k, v) for k, v in tiers if v > 0]
    top = max((v for _k, v in tiers), default=1.0)
    span = math.log10(max(top, 10.0)) + 1
    bars = []
    for n, (kind, gib) in enumerate(tiers):
        length = 100 * (math.log10(max(gib, 1.0)) + 1) / span
        bars.append(
            {
                "kind": kind,
                "gib": whole_gib(gib) if kind == "cpu" else round(gib),
                "conversations": counts[kind],
                "width": round(length * 3.0, 1),
                "y": 10 + n * CHART_ROW_PX,
            }
        )
    return {"bars": bars, "height": 20 + CHART_ROW_PX * len(bars)}


CHART_ROW_PX = 48
"""Height of one tier in the PDF chart: a 26 px bar and a line of text under it."""


def _placement(alternative: DocumentAlternative) -> Placement:
    summary = alternative["summary"]
    if "conversations_in_cpu_tier" in summary:
        return Placement(
            on_gpus=int(summary["conversations_resident"]),
            in_cpu_tier=int(summary["conversations_in_cpu_tier"]),
            on_nvme=int(summary["conversations_on_nvme"]),
            recomputed=int(summary["conversations_recomputed"]),
            in_shared_tier=int(summary.get("conversations_in_shared_tier") or 0),
            in_nvme_tier=int(summary.get("conversations_in_nvme_tier") or 0),
        )
    return placement(
        users=int(summary.get("users") or 0),
        conversations_on_gpus=int(summary.get("conversations_on_gpus") or 0),
        cpu_tier_gib=float(summary.get("cpu_tier_total_gib") or 0),
        nvme_sized=bool(summary.get("nvme_drive")),
        new_conversations_per_day=int(
            alternative.get("inputs", {}).get("new_conversations_per_day") or 0
        ),
    )


def as_decimal_document(doc: QuoteDocument) -> dict[str, Any]:
    """The template context's ``doc``: a copy of ``doc`` with money strings as ``Decimal``,
    dates as ``date`` and each alternative's charts drawn."""
    out: dict[str, Any] = dict(doc)
    out["alternatives"] = []
    for alt in doc["alternatives"]:
        lines = [
            {k: Decimal(str(v)) if k in MONEY_KEYS else v for k, v in ln.items()}
            for ln in alt["lines"]
        ]
        totals = {k: Decimal(str(v)) for k, v in alt["totals"].items()}
        out["alternatives"].append(
            {
                **alt,
                "lines": lines,
                "totals": totals,
                "chart": tiers_chart(alt),
                "ttft": ttft_chart.chart(
                    alt["summary"].get("ttft_curve") or [],
                    int(alt["summary"].get("context_tokens") or 0),
                ),
                "traffic": traffic_chart.charts(alt["summary"].get("traffic_curves")),
            }
        )
    for key in ("date", "valid_until"):
        text = out.get(key)
        out[key] = dt.date.fromisoformat(text) if text else None
    every_line = [ln for alt in doc["alternatives"] for ln in alt["lines"]]
    if any("is_example" in ln for ln in every_line):
        out["example_prices"] = any(ln.get("is_example") for ln in every_line)
    out["discount_percent"] = Decimal(doc["discount_percent"])
    out["vat_percent"] = Decimal(doc["vat_rate"]) * 100
    return out
