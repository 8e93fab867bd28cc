"""How long the quote PDF takes to render (target: a standard quote under 1.5 s median).

The standard quote is the seed example's requested configuration (Qwen3-32B-FP8,
8,192 tokens, 500 users, 4 × RTX PRO 6000 SE, FP8 cache, NVMe tier) priced from the
bundled example price list; the second figure is the draft presales get from an
inquiry, with its four alternatives side by side.
"""

from __future__ import annotations

import statistics
import time

from django.utils import timezone

from benchmarks.run import Result
from benchmarks.seed import SEED_INPUTS
from configurator.catalog.services import prices_from_demo_file
from configurator.planning.services import plan_create
from configurator.quotes.document import document_from_plans
from configurator.quotes.pdf import quote_pdf_render
from configurator.quotes.pricing import alternative_label, price_bom, variant_inputs

SEED = SEED_INPUTS


def _document(alternatives: int) -> dict[str, object]:
    prices = prices_from_demo_file()
    alts = []
    for inputs in variant_inputs(SEED)[:alternatives]:
        plan = plan_create(**inputs)
        lines = price_bom(plan, prices=prices, language="en")
        alts.append((alternative_label(inputs), inputs, plan.summary(), lines))
    return document_from_plans(
        customer="Beispiel AG", language="en", alternatives=alts, today=timezone.localdate()
    )


def _median_s(doc: dict[str, object], runs: int) -> float:
    quote_pdf_render(doc)  # warm-up: fonts and stylesheet are loaded once per process
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        quote_pdf_render(doc)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def run() -> list[Result]:
    standard = _median_s(_document(1), runs=9)
    four = _median_s(_document(4), runs=5)
    return [
        Result("pdf", "standard quote PDF, median", f"{standard:.2f} s", "< 1.5 s", standard < 1.5),
        Result("pdf", "draft with 4 alternatives, median", f"{four:.2f} s", "-", True),
    ]
