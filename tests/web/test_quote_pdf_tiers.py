"""The quote PDF names each configuration's shared tier, says when its engine command
leaves that tier out, and tells per-node figures from totals in a multi-node plan.

Workloads: the seed (Qwen3-32B-FP8, 8,192 tokens, 500 users, 2,000 new conversations a
day; tests/quote_factories.py), whose cheapest two recommendations at the demo prices
differ only in the second's shared tier (tests/web/test_recommend.py), and the same
model for 50,000 users and 200,000 new conversations a day, which takes several nodes.
Expected figures come from each plan's own summary (``sizing/summary.py``).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from pypdf import PdfReader

from configurator.planning.recommend import recommendation_create
from configurator.planning.services import plan_stored
from configurator.quotes.document import document_from_quote
from configurator.quotes.pdf import quote_pdf_render
from configurator.quotes.services import quote_create_from_recommendation
from sizing.search.space import LAYOUT_FIELDS
from sizing.summary import plan_summary
from tests.quote_factories import make_inquiry, make_presales

pytestmark = pytest.mark.django_db

MULTI_NODE = ["--model", "Qwen/Qwen3-32B-FP8", "--context", "8192", "--users", "50000"]
MULTI_NODE += ["--new-conversations-per-day", "200000", "--customer", "X"]


def _text(data: bytes) -> str:
    """The PDF's text on one line; a line broken after a slash ("NFS/ pNFS") joined."""
    pages = PdfReader(io.BytesIO(data)).pages
    return " ".join(" ".join(page.extract_text() for page in pages).split()).replace("/ ", "/")


def _quote_from_the_cheapest(language: str):  # type: ignore[no-untyped-def]
    make_presales()
    inquiry = make_inquiry(language=language)
    cheapest = recommendation_create(inquiry.workload).configurations[0]
    choice = {k: cheapest.inputs[k] for k in LAYOUT_FIELDS}
    return quote_create_from_recommendation(inquiry=inquiry, user=None, choice=choice)


@pytest.mark.parametrize(
    ("language", "title", "warning"),
    [
        (
            "en",
            ", with a 0.5 TB shared tier",
            "Shared tier: required, not configured. The plan needs a shared NFS/pNFS or S3 "
            "tier of 0.5 TB (0.30 GB/s per node); the command above has none. Its endpoint "
            "(NFS export or S3 bucket) is set at deployment: build the deployment bundle "
            "with --shared nfs or --shared s3.",
        ),
        (
            "de",
            ", mit gemeinsamer Stufe von 0,5 TB",
            "Gemeinsame Stufe: erforderlich, nicht konfiguriert. Der Plan braucht eine "
            "gemeinsame NFS/pNFS- oder S3-Stufe von 0,5 TB (0,30 GB/s je Knoten); der "
            "Befehl oben hat keine. Ihr Endpunkt (NFS-Export oder S3-Bucket) wird bei der "
            "Bereitstellung festgelegt: das Deployment-Paket mit --shared nfs oder "
            "--shared s3 erstellen.",
        ),
    ],
)
def test_the_alternative_with_a_shared_tier_is_titled_and_its_appendix_warns(
    language: str, title: str, warning: str
) -> None:
    # The second alternative's shared tier holds every user once: 500 × 2^30 B = 0.54 TB
    # (its summary's shared_tier_tb), at the summary's 0.30 GB/s per node. The appendix
    # shows serve.sh with the bundle's default tiers, which name no shared tier.
    quote = _quote_from_the_cheapest(language)
    first, second = quote.alternatives.order_by("position")[:2]
    assert not first.plan_summary["shared_tier_tb"]
    assert round(second.plan_summary["shared_tier_tb"], 1) == 0.5
    assert round(second.plan_summary["shared_tier_gbps"], 2) == 0.30
    # The same layout otherwise: the same title, and the shared tier named after it.
    assert second.label_in(language) == first.label_in(language) + title
    text = _text(quote_pdf_render(document_from_quote(quote)))
    assert text.count(title) == 3  # side by side, the configuration's heading, appendix
    assert text.count(warning) == 1  # the second alternative's appendix only


@pytest.mark.parametrize(
    ("language", "label"),
    [("en", "in the shared tier of all nodes"), ("de", "in der gemeinsamen Stufe aller Knoten")],
)
def test_the_tier_chart_draws_the_shared_tier_with_its_conversations(
    language: str, label: str
) -> None:
    # The second alternative's shared tier: the summary's shared_tier_tb in GiB
    # (0.54 × 10^12 B / 2^30 B = 503 GiB) holding the 500 - 134 - 178 = 188
    # conversations its cut CPU tier leaves out (conversations_in_shared_tier).
    quote = _quote_from_the_cheapest(language)
    second = quote.alternatives.order_by("position")[1]
    s = second.plan_summary
    assert s["conversations_in_shared_tier"] == 188
    gib = round(s["shared_tier_tb"] * 10**12 / 2**30)
    text = _text(quote_pdf_render(document_from_quote(quote)))
    assert text.count(f"{gib} GiB · {label}: 188") == 1
    assert text.count(label) == 1  # the first alternative has no shared tier


@pytest.mark.parametrize(
    ("language", "drives", "gpus", "writes"),
    [
        (
            "de",
            "NVMe-Stufe: {n} × {drive} je Knoten; {nodes} Knoten: {all} Laufwerke insgesamt",
            "{replicas} Replikate mit Tensor-Parallelität 1, {per_node} je Knoten",
            "{tb} TB/Tag geschrieben je Knoten ({total} TB/Tag auf allen Knoten); "
            "{n} × {drive} je Knoten",
        ),
        (
            "en",
            "NVMe tier: {n} × {drive} per node; {nodes} nodes: {all} drives in all",
            "{replicas} replicas at tensor parallel size 1, {per_node} per node",
            "{tb} TB/day written per node ({total} TB/day on all nodes); {n} × {drive} per node",
        ),
    ],
)
def test_a_multi_node_pdf_says_which_figures_are_per_node(
    tmp_path: Path, language: str, drives: str, gpus: str, writes: str
) -> None:
    plan = plan_stored(
        {
            "model": "Qwen/Qwen3-32B-FP8",
            "context_tokens": 8192,
            "users": 50_000,
            "new_conversations_per_day": 200_000,
        }
    )
    s = plan_summary(plan)
    nodes, n = s["nodes"], s["nvme_drive_count"]
    assert nodes > 1 and n >= 1 and s["tensor_parallel_size"] == 1

    def de(value: float) -> str:
        return f"{value:,.1f}".replace(",", " ").replace(".", ",").replace(" ", ".")

    fmt = de if language == "de" else (lambda value: f"{value:,.1f}")
    figures = {
        "n": n,
        "drive": s["nvme_drive"],
        "nodes": nodes,
        "all": n * nodes,
        "replicas": s["replicas"],
        "per_node": s["gpus_per_node"],  # TP 1: one replica per GPU
        "tb": fmt(s["nvme_writes_tb_per_day_per_node"]),
        "total": fmt(s["nvme_writes_tb_per_day"]),
    }
    out = tmp_path / "quote.pdf"
    call_command("quote_pdf", *MULTI_NODE, "--language", language, "--out", str(out))
    text = _text(out.read_bytes())
    assert drives.format(**figures) in text
    assert gpus.format(**figures) in text
    assert writes.format(**figures) in text
