"""Every figure the customer and the engineer read for the seed example is one plan value.

The seed example (docs/sizing.md: Qwen3-32B-FP8, 8,192 tokens, 500 users, 4 × RTX PRO 6000
SE, FP8 cache, 2,000 new conversations a day) is sized once; the page's estimate, the
quote PDF, the confirmation e-mail and the bundle README must each show the figure
from ``sizing.summary.plan_summary``. The table below says, per figure, how each surface writes it;
the values are filled in from the summary, never typed in.
"""

from __future__ import annotations

import html
import io
import math
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.core import mail
from django.core.cache import cache
from django.test import Client
from pypdf import PdfReader

from configurator.deployments.services import bundle_files
from configurator.inquiries.mail import inquiry_mail_send
from configurator.planning.services import plan_stored
from configurator.quotes.document import document_from_quote
from configurator.quotes.pdf import quote_pdf_render
from configurator.quotes.services import quote_create_from_inquiry, quote_issue
from sizing.summary import plan_summary
from sizing.workload import SEED_WORKLOAD, stored_inputs
from tests.quote_factories import SEED_INPUTS, make_inquiry, make_presales
from tests.seed_form import seed_form

pytestmark = pytest.mark.django_db

Surfaces = dict[str, str | None]


def n(value: float, digits: int = 0) -> str:
    """English grouping, as every English surface formats numbers."""
    return f"{value:,.{digits}f}"


def gib(value: float) -> str:
    """A CPU tier as the customer reads it: whole GiB rounded down, never more than vLLM
    is given (``--kv-offloading-size``, whole GiB; the seed's 500 GiB stays 500)."""
    return n(math.floor(value + 1e-6))


# figure → (surface → what that surface writes, or None where it does not show it)
FIGURES: dict[str, Callable[[dict[str, Any]], Surfaces]] = {
    "conversations on the GPUs": lambda s: {
        "page": f"on the GPUs: {n(s['conversations_resident'])}",
        "pdf": f"{n(s['conversations_on_gpus'])} full-length conversations fit in GPU memory",
        "email": f"Conversations on the GPUs: {n(s['conversations_on_gpus'])}",
        "readme": f"{n(s['conversations_resident'])} on the GPUs",
    },
    "conversations resting in the CPU tier": lambda s: {
        "page": f"resting in CPU memory: {n(s['conversations_in_cpu_tier'])}",
        "pdf": f"resting in CPU memory: {n(s['conversations_in_cpu_tier'])}",
        "email": None,
        "readme": f"{n(s['conversations_in_cpu_tier'])} in the CPU-memory tier",
    },
    "conversations only on NVMe": lambda s: {
        "page": f"earlier today, on NVMe: {n(s['conversations_on_nvme'])}",
        "pdf": f"earlier today, on NVMe: {n(s['conversations_on_nvme'])}",
        "email": None,
        "readme": f"{n(s['conversations_on_nvme'])} earlier ones of the day on NVMe",
    },
    "CPU-memory tier": lambda s: {
        "page": f"{gib(s['cpu_tier_total_gib'])} GiB ≈ {n(s['cpu_tier_total_gb'])} GB",
        "pdf": f"{gib(s['cpu_tier_total_gib'])} GiB ({n(s['cpu_tier_total_gb'])} GB)",
        "email": f"CPU-memory tier: {gib(s['cpu_tier_total_gib'])} GiB",
        "readme": f"({gib(s['cpu_tier_total_gib'])} GiB)",
    },
    "CPU tier per engine instance": lambda s: {
        "page": f"{gib(s['cpu_tier_per_instance_gib'])} GiB pinned per engine instance",
        "pdf": f"{gib(s['cpu_tier_per_instance_gib'])} GiB per instance",
        "email": f"{gib(s['cpu_tier_per_instance_gib'])} GiB per engine instance",
        "readme": f"CPU tier of {n(s['cpu_tier_per_instance_gib'], 2)} GiB",
    },
    "host memory": lambda s: {
        "page": f"{s['dimm_count']} × {s['dimm_gb']} GB = {n(s['host_memory_gb'])} GB",
        "pdf": f"{s['dimm_count']} × {s['dimm_gb']} GB DDR5 = {n(s['host_memory_gb'])} GB",
        "email": f"{s['dimm_count']} × {s['dimm_gb']} GB = {n(s['host_memory_gb'])} GB",
        "readme": None,
    },
    "NVMe tier": lambda s: {
        "page": f"{s['nvme_drive_count']} × {s['nvme_drive']}",
        "pdf": f"NVMe tier: {s['nvme_drive_count']} × {s['nvme_drive']}",
        "email": f"NVMe tier: {s['nvme_drive_count']} × {s['nvme_drive']}",
        "readme": None,
    },
    "NVMe writes per day": lambda s: {
        "page": f"{n(s['nvme_writes_tb_per_day'], 1)} TB written per day",
        "pdf": f"{n(s['nvme_writes_tb_per_day'], 1)} TB/day written",
        "email": f"{n(s['nvme_writes_tb_per_day'], 1)} TB written per day",
        "readme": None,
    },
    "what a hit is worth (TTFT of a CPU-tier hit against a full prefill)": lambda s: {
        "page": f"{n(s['ttft_hit_ms']['cpu'])} ms from the CPU tier against "
        f"{n(s['ttft_miss_ms'])} ms for a full prefill",
        "pdf": f"{n(s['ttft_hit_ms']['cpu'])} ms to the first token from the CPU tier / "
        f"{n(s['ttft_miss_ms'])} ms full prefill",
        "email": f"first token comes after about {n(s['ttft_hit_ms']['cpu'])} ms against about "
        f"{n(s['ttft_miss_ms'])} ms for a full prefill",
        "readme": f"from about {n(s['ttft_miss_ms'])} ms (full prefill) towards "
        f"{n(s['ttft_hit_ms']['cpu'])} ms (CPU-tier hit",
    },
    "speedup of a returning user from the CPU tier": lambda s: {
        "page": f"comes {n(s['ttft_speedup']['cpu'], 1)}× sooner",
        "pdf": f"({n(s['ttft_speedup']['cpu'], 1)}×)",
        "email": None,
        "readme": f"about {n(s['ttft_speedup']['cpu'], 1)}× sooner",
    },
    "time to first token, CPU-tier hit against a miss": lambda s: {
        "page": f"{n(s['ttft_hit_ms']['cpu'])} ms from the CPU tier against "
        f"{n(s['ttft_miss_ms'])} ms",
        "pdf": f"{n(s['ttft_hit_ms']['cpu'])} ms to the first token from the CPU tier / "
        f"{n(s['ttft_miss_ms'])} ms full prefill",
        "email": None,
        "readme": None,
    },
}


def flat(text: str) -> str:
    """Visible text with tags removed, entities decoded and whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def surfaces(client: Client, settings: Any) -> dict[str, str]:
    """The seed example's text on each surface, in English."""
    settings.HF_HUB_OFFLINE = True
    cache.clear()
    page = client.post("/estimate/", seed_form(active_share=""), headers={"Accept-Language": "en"})
    assert page.status_code == 200
    make_presales()
    inquiry = make_inquiry(language="en")
    quote = quote_issue(quote=quote_create_from_inquiry(inquiry=inquiry, user=None))
    pdf = quote_pdf_render(document_from_quote(quote))
    pdf_text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    inquiry_mail_send(inquiry_id=inquiry.pk, kind="customer")
    customer_mail = next(m for m in mail.outbox if inquiry.email in m.to)
    readme = bundle_files(plan=plan_stored(SEED_INPUTS))[0]
    assert readme.path == "README.md"
    return {
        "page": flat(page.content.decode()),
        "pdf": " ".join(pdf_text.split()),
        "email": " ".join(customer_mail.body.split()),
        "readme": " ".join(readme.text.split()),
    }


def test_every_surface_shows_the_plans_own_figures(client: Client, settings: Any) -> None:
    summary = plan_summary(plan_stored(SEED_INPUTS))
    # The seed example fills every tier, so no figure is vacuously absent.
    assert summary["conversations_in_cpu_tier"] and summary["conversations_on_nvme"]
    texts = surfaces(client, settings)
    missing = [
        f"{figure} on the {surface}: {expected!r}"
        for figure, table in FIGURES.items()
        for surface, expected in table(summary).items()
        if expected is not None and expected not in texts[surface]
    ]
    assert not missing, "\n".join(missing)


def test_bundle_readme_counts_what_a_cut_tier_holds() -> None:
    # The reviewer's example (tests/sizing/test_capped_tier.py derives the figures):
    # 2 x RTX PRO 6000 SE at TP 2, 384 GB of host memory, no shared tier: a 178.81 GiB
    # tier holds 178 conversations of 1 GiB, the other 366 - 178 = 188 are recomputed.
    inputs = stored_inputs(
        SEED_WORKLOAD.replace(
            gpus_per_node=2,
            tensor_parallel_size=2,
            max_host_memory_gb=384,
            without_shared_tier=True,
            new_conversations_per_day=0,
        )
    )
    readme = " ".join(bundle_files(plan=plan_stored(inputs))[0].text.split())
    assert "134 on the GPUs, 178 in the CPU-memory tier (178 GiB)" in readme
    assert "188 recomputed when their users return" in readme
    assert "179 GiB" not in readme
