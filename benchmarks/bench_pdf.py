"""Quote PDFs: CPU of a rendering, and the download of an unchanged quote.

The standard quote is the seed example's requested configuration (Qwen3-32B-FP8,
8,192 tokens, 500 users, 4 × RTX PRO 6000 SE, FP8 cache, NVMe tier) priced from the
bundled example price list. The drafts have its four alternatives side by side (target:
at most 0.8 s of CPU to render): once built from stored plans' summaries, which carry no
traffic curves, and once as presales get it from an inquiry, whose plans carry them and
so two more charts per alternative. The download is the presales page's PDF
link for the inquiry's draft once the job has rendered it (target: at most 50 ms),
measured in-process against a throw-away test database. Fonts are subset with
HarfBuzz when ``libharfbuzz-subset0`` is installed (README), else with fontTools,
which WeasyPrint warns about and which costs about a fifth more; the row says which.
"""

from __future__ import annotations

from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from benchmarks.run import Result
from benchmarks.seed import SEED_INPUTS
from benchmarks.timing import cpu_samples
from configurator.catalog.services import prices_from_demo_file
from configurator.planning.services import plan_stored
from configurator.quotes.document import document_from_plans
from configurator.quotes.document_types import QuoteDocument
from configurator.quotes.pdf import quote_pdf_render
from configurator.quotes.pricing import alternative_label, price_bom, variant_workloads
from sizing.summary import plan_summary
from sizing.workload import Workload

SEED = SEED_INPUTS


def _document(alternatives: int) -> QuoteDocument:
    prices = prices_from_demo_file()
    alts = []
    for workload in variant_workloads(Workload.from_json(SEED))[:alternatives]:
        inputs = workload.to_json()
        plan = plan_stored(inputs)
        lines = price_bom(plan, prices=prices, language="en")
        alts.append((alternative_label(workload), inputs, plan_summary(plan), lines))
    return document_from_plans(
        customer="Beispiel AG", language="en", alternatives=alts, today=timezone.localdate()
    )


def _subsetter() -> str:
    from weasyprint.text.ffi import harfbuzz_subset

    return "HarfBuzz" if harfbuzz_subset else "fontTools"


def _inquiry_draft(runs: int) -> tuple[float, str, float, int]:
    """CPU s (median) of rendering the four-alternative draft made from the seed inquiry,
    the CPU ms (median / p95 text, p95) of downloading it unchanged, and its number of
    alternatives."""
    from configurator.quotes.document import document_from_quote
    from configurator.quotes.pdf_cache import quote_pdf_refresh
    from configurator.quotes.services import quote_create_from_inquiry
    from tests.quote_factories import make_inquiry, make_presales

    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        user = make_presales()
        quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=user)
        document = document_from_quote(quote)
        render = cpu_samples(lambda: quote_pdf_render(document), 5).median / 1e3
        quote_pdf_refresh(quote_id=quote.pk)  # what the job does when the draft is made
        client = Client()
        client.force_login(user)
        url = reverse("quotes:pdf", args=[quote.pk])
        samples = cpu_samples(lambda: client.get(url), runs, warmup=2)
        return render, samples.text(1), samples.p95, quote.alternatives.count()
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run() -> list[Result]:
    standard = cpu_samples(lambda: quote_pdf_render(_document(1)), 5).median / 1e3
    four = cpu_samples(lambda: quote_pdf_render(_document(4)), 5).median / 1e3
    inquiry, download, download_p95, alternatives = _inquiry_draft(30)
    fonts = f"fonts subset by {_subsetter()}"
    return [
        Result(
            "pdf",
            "standard quote PDF, CPU (median)",
            f"{standard:.2f} s ({fonts})",
            "< 1.5 s",
            standard < 1.5,
        ),
        Result(
            "pdf",
            "draft with 4 alternatives, no traffic charts, CPU (median)",
            f"{four:.2f} s ({fonts})",
            "<= 0.8 s",
            four <= 0.8,
        ),
        Result(
            "pdf",
            f"draft with {alternatives} alternatives made from an inquiry, traffic charts "
            "included, CPU (median)",
            f"{inquiry:.2f} s ({fonts})",
            "<= 0.8 s",
            inquiry <= 0.8,
        ),
        Result(
            "pdf",
            f"download of an unchanged {alternatives}-alternative draft, CPU (median / p95)",
            download,
            "<= 50 ms",
            download_p95 <= 50,
        ),
    ]
