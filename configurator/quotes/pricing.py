"""Price a plan's bill of materials from the price list, and name alternatives."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.utils.translation import gettext as _

from configurator.catalog.models import Price
from configurator.numbers import num
from sizing.bom.lines import bill_of_materials
from sizing.hardware import catalog
from sizing.plan.orchestrator import Plan
from sizing.workload import Workload

ZERO = Decimal("0.00")


@dataclass(frozen=True)
class PricedLine:
    """A BOM line with the price in force on the pricing date (EUR, net).

    Item name and reason are kept in English and German; ``description`` and ``why``
    give them in ``language``.
    """

    sku: str
    category: str
    quantity: int
    unit_price_eur: Decimal
    unit_cost_eur: Decimal
    priced: bool
    is_example: bool
    description_en: str
    description_de: str
    why_en: str
    why_de: str
    language: str = "en"

    @property
    def description(self) -> str:
        return self.description_de if self.language == "de" else self.description_en

    @property
    def why(self) -> str:
        return self.why_de if self.language == "de" else self.why_en


def price_bom(plan: Plan, *, prices: dict[str, Price], language: str = "en") -> list[PricedLine]:
    """The plan's BOM lines priced from ``prices`` (SKU → price row in force).

    A SKU without a price gets 0.00 EUR and ``priced=False`` so the editor can flag it.
    Texts are in both languages; ``language`` picks the one ``description``/``why`` give.

    Raises:
        ChassisLimitError: the plan's parts do not fit the chassis (``sizing.hardware.chassis``).
    """
    out = []
    for line in bill_of_materials(plan).lines:
        price = prices.get(line.sku)
        out.append(
            PricedLine(
                sku=line.sku,
                category=line.category,
                quantity=line.quantity,
                unit_price_eur=price.unit_price_eur if price else ZERO,
                unit_cost_eur=price.unit_cost_eur if price else ZERO,
                priced=price is not None,
                is_example=bool(price and price.is_example),
                description_en=price.display_name("en") if price else line.sku,
                description_de=price.display_name("de") if price else line.sku,
                why_en=line.why_en,
                why_de=line.why_de,
                language=language,
            )
        )
    return out


GPU_COUNTERPART = {"rtx-pro-6000-se": "h200-nvl", "h200-nvl": "rtx-pro-6000-se"}
"""The GPU offered side by side with the requested one (issue 6's example pair)."""


def alternative_label(workload: Workload, nodes: int = 1, shared_tier_tb: float = 0.0) -> str:
    """A short label for a configuration: GPU, cache precision, NVMe tier or not, and the
    shared tier when the plan has one. The GPU is named by its catalog name
    (``sizing/data/hardware.json``), as the page, the CLI and the rest of the PDF name it.

    ``nodes`` is the plan's node count; with two or more the label reads
    "nodes × GPUs per node × GPU (total GPUs)", since the workload's
    ``gpus_per_node`` alone would understate the GPUs a multi-node plan buys.
    ``shared_tier_tb`` is the plan's shared tier in TB (the summary's
    ``shared_tier_tb``; 0: none), named with its capacity so that two configurations
    that differ only in it are told apart. Call inside ``translation.override`` for
    the quote's language.
    """
    try:
        gpu_name = catalog.gpu(workload.gpu).name
    except Exception:  # an unknown slug still gets a label
        gpu_name = str(workload.gpu)
    cache = _("FP8 cache") if workload.kv_dtype == "fp8" else _("16-bit cache")
    nvme = _("with NVMe tier") if workload.nvme_conversations_per_day else _("without NVMe tier")
    gpus = f"{workload.gpus_per_node} × {gpu_name}"
    if nodes > 1:
        gpus = _("%(nodes)s nodes × %(gpus)s (%(total)s GPUs)") % {
            "nodes": nodes,
            "gpus": gpus,
            "total": nodes * workload.gpus_per_node,
        }
    label = f"{gpus}, {cache}, {nvme}"
    if shared_tier_tb > 0:
        label += ", " + _("with a %(tb)s TB shared tier") % {"tb": num(shared_tier_tb, 1)}
    return label


def variant_workloads(base: Workload) -> list[Workload]:
    """The requested configuration first, then the ones shown beside it.

    The other GPU of the RTX PRO 6000 SE / H200 NVL pair, the other cache precision
    (FP8 against 16-bit) and, when the request has an NVMe tier, the same without it.
    """
    out = [base]
    other_gpu = GPU_COUNTERPART.get(base.gpu)
    if other_gpu:
        out.append(base.replace(gpu=other_gpu))
    out.append(base.replace(kv_dtype="auto" if base.kv_dtype == "fp8" else "fp8"))
    if base.nvme_conversations_per_day:
        out.append(base.replace(without_nvme_tier=True))
    return out
