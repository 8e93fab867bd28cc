"""Quotes edited below their sizing plan: warnings, confirmed removal, acknowledged issuing,
the PDF's deviation note, the discount limit and the engine appendix.

Expected figures: the seed example (docs/sizing.md; tests/quote_factories.py SEED_INPUTS):
24 × 48 GB DIMMs for a host-memory need of 921 GB (537 GB pinned KV buffer + 384 GB
reserve, the DIMM line's own reason text), on 2 × 12 = 24 memory channels, priced from
configurator/catalog/data/demo_prices.csv.
"""

from __future__ import annotations

import io
import json
import re
import zipfile

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation
from pypdf import PdfReader

from configurator.deployments.services import bundle_build
from configurator.planning.services import plan_stored
from configurator.quotes.deviations import deviation_text
from configurator.quotes.document import document_from_quote
from configurator.quotes.engine_appendix import engine_appendix
from configurator.quotes.models import Quote, QuoteLine, QuoteNumberCounter
from configurator.quotes.pdf import quote_pdf_render
from configurator.quotes.services import QuoteDeviationError, quote_create_from_inquiry, quote_issue
from sizing.bom.check import Deviation, bom_deviations
from sizing.bom.lines import bill_of_materials
from tests.quote_factories import SEED_INPUTS, make_inquiry, make_presales

pytestmark = pytest.mark.django_db


@pytest.fixture
def presales(client: Client) -> Client:
    """A signed-in presales user whose browser asks for English pages."""
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    client.force_login(make_presales())
    return client


def _seed_lines() -> list[tuple[str, str, int]]:
    return [
        (ln.sku, ln.category, ln.quantity)
        for ln in bill_of_materials(plan_stored(SEED_INPUTS)).lines
    ]


def test_the_plans_own_bom_has_no_deviation() -> None:
    assert bom_deviations(plan_stored(SEED_INPUTS), _seed_lines()) == []


def test_fewer_dimms_fall_short_and_are_unbalanced() -> None:
    plan = plan_stored(SEED_INPUTS)
    lines = [(s, c, 12 if c == "dimm" else q) for s, c, q in _seed_lines()]
    # 12 × 48 GB = 576 GB against the need of 921 GB; 12 DIMMs on 24 channels.
    assert bom_deviations(plan, lines) == [
        Deviation("dimm", "short", 576, 921, "GB"),
        Deviation("dimm", "unbalanced", 12, 24, "pcs"),
    ]


def test_missing_chassis_and_gpus_are_named() -> None:
    plan = plan_stored(SEED_INPUTS)
    lines = [(s, c, 2 if c == "gpu" else q) for s, c, q in _seed_lines() if c != "chassis"]
    # The seed plan: 1 node, 4 GPUs per node (SEED_INPUTS).
    assert bom_deviations(plan, lines) == [
        Deviation("chassis", "short", 0, 1, "pcs"),
        Deviation("gpu", "short", 2, 4, "pcs"),
    ]


def _dimm_line(quote: Quote) -> QuoteLine:
    return QuoteLine.objects.get(alternative__quote=quote, alternative__position=0, category="dimm")


def test_editor_warns_when_the_dimms_fall_below_the_plan(presales: Client) -> None:
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    page = presales.get(reverse("quotes:detail", args=[quote.pk])).content.decode()
    assert "Below the sizing plan" not in page
    line = _dimm_line(quote)
    url = reverse("quotes:line_quantity", args=[line.pk])
    body = presales.post(url, {"quantity": "12"}, HTTP_HX_REQUEST="true").content.decode()
    assert "Below the sizing plan" in body
    assert "576 GB of DIMMs, the plan needs 921 GB" in body
    assert "12 DIMMs are not a multiple of the 24 memory channels" in body
    # The full page offers the acknowledgement beside the issue button.
    page = presales.get(reverse("quotes:detail", args=[quote.pk])).content.decode()
    assert 'name="accept_deviations"' in page


def test_removing_a_line_needs_confirmation_and_offers_it_back(presales: Client) -> None:
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    chassis = QuoteLine.objects.get(
        alternative__quote=quote, alternative__position=0, category="chassis"
    )
    url = reverse("quotes:line_quantity", args=[chassis.pk])
    refused = presales.post(url, {"quantity": "0"}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 400
    assert 'name="confirm_remove"' in refused.content.decode()
    assert QuoteLine.objects.filter(pk=chassis.pk).exists()
    done = presales.post(url, {"quantity": "0", "confirm_remove": "1"}, HTTP_HX_REQUEST="true")
    body = done.content.decode()
    assert done.status_code == 200 and not QuoteLine.objects.filter(pk=chassis.pk).exists()
    assert "Add it back" in body and "0 server chassis, the plan needs 1" in body
    alt = chassis.alternative
    back = presales.post(
        reverse("quotes:line_add", args=[alt.pk]),
        {"sku": chassis.sku, "quantity": str(chassis.quantity)},
        HTTP_HX_REQUEST="true",
    )
    assert back.status_code == 200 and "Below the sizing plan" not in back.content.decode()


def test_issuing_below_the_plan_needs_the_acknowledgement(presales: Client) -> None:
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    line = _dimm_line(quote)
    line.quantity = 12
    line.save()
    url = reverse("quotes:issue", args=[quote.pk])
    refused = presales.post(url)
    assert refused.status_code == 400
    assert "confirm the deviations" in refused.content.decode()
    quote.refresh_from_db()
    assert not quote.is_issued and not QuoteNumberCounter.objects.exists()
    with pytest.raises(QuoteDeviationError):
        quote_issue(quote=quote)
    assert presales.post(url, {"accept_deviations": "1"}).status_code == 302
    quote.refresh_from_db()
    assert quote.is_issued and quote.snapshot is not None
    assert quote.snapshot["deviations_acknowledged"] is True
    first = quote.snapshot["alternatives"][0]
    assert "576 GB of DIMMs, the plan needs 921 GB" in first["deviations"]
    text = "\n".join(
        p.extract_text()
        for p in PdfReader(io.BytesIO(quote_pdf_render(document_from_quote(quote)))).pages
    )
    assert "Deviation from the sizing plan" in text
    assert "576 GB of DIMMs, the plan needs 921 GB" in text


def test_an_unchanged_quote_issues_without_acknowledgement() -> None:
    make_presales()
    quote = quote_issue(quote=quote_create_from_inquiry(inquiry=make_inquiry(), user=None))
    assert quote.snapshot is not None and quote.snapshot["deviations_acknowledged"] is False
    assert all(alt["deviations"] == [] for alt in quote.snapshot["alternatives"])


def test_discount_is_limited_and_a_negative_margin_warns(presales: Client) -> None:
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    url = reverse("quotes:settings", args=[quote.pk])
    too_much = presales.post(url, {"discount_percent": "100", "language": "en", "notes": ""})
    assert too_much.status_code == 400
    assert "0 to 50 % of the list total" in too_much.content.decode()
    quote.refresh_from_db()
    assert quote.discount_percent == 0
    # 50 % is the house limit (forms.MAX_DISCOUNT_PERCENT); at demo prices the net is
    # then below the demo cost (demo_prices.csv costs), so the margin is negative.
    assert (
        presales.post(url, {"discount_percent": "50", "language": "en", "notes": ""}).status_code
        == 302
    )
    page = presales.get(reverse("quotes:detail", args=[quote.pk])).content.decode()
    assert "Negative margin (staff only)" in page


def test_pdf_appendix_matches_the_bundle_for_the_nvme_alternative() -> None:
    # The seed request has 2,000 new conversations a day, so an NVMe tier.
    appendix = engine_appendix(dict(SEED_INPUTS))
    assert appendix is not None and appendix["short_command"] is None
    data = bundle_build(plan=plan_stored(SEED_INPUTS), engine="vllm")
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        name = next(n for n in zf.namelist() if n.endswith("kv-transfer-config.json"))
        bundle_config = json.loads(zf.read(name))
        serve = next(
            n for n in zf.namelist() if n.endswith("instance0/serve.sh") or n.endswith("/serve.sh")
        )
        serve_text = zf.read(serve).decode()
    assert appendix["config"] == bundle_config
    assert bundle_config["kv_connector_extra_config"]["spec_name"] == "TieringOffloadingSpec"
    assert "--kv-offloading-size" not in appendix["command"]
    for flag in (
        "--tensor-parallel-size",
        "--max-model-len",
        "--kv-cache-dtype",
        "--prefix-caching-hash-algo",
    ):
        assert flag in appendix["command"] and flag in serve_text
    # The appendix shows instance0's serve.sh as it is: its exec line with numactl and
    # port, its exported variables, and the node's ports as the router's backends.
    assert serve == appendix["script"] == "node1/vllm/instance0/serve.sh"
    assert "exec " + appendix["command"] + "\n" in serve_text
    assert "--port 8100" in appendix["command"]
    # The variables as serve.sh exports them, so pasted they reach the command too.
    assert all(
        line.startswith("export ") and line + "\n" in serve_text
        for line in appendix["env"].splitlines()
    )
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        router = zf.read("router/vllm-router.sh").decode()
    # The seed node runs four TP-1 instances (docs/sizing.md), from placement.BASE_PORT.
    assert appendix["ports"] == [8100, 8101, 8102, 8103]
    assert ",".join(f"http://node1:{p}" for p in appendix["ports"]) in router
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    text = "\n".join(
        p.extract_text()
        for p in PdfReader(io.BytesIO(quote_pdf_render(document_from_quote(quote)))).pages
    )
    assert "TieringOffloadingSpec" in text
    assert "8100, 8101, 8102, 8103" in text and "numactl" in text
    # The alternative without NVMe tier keeps the seed's short form (docs/sizing.md: 125 GiB).
    no_nvme = engine_appendix({**SEED_INPUTS, "new_conversations_per_day": 0})
    assert no_nvme is not None and "--kv-offloading-size 125" in no_nvme["short_command"]


def test_presales_pages_have_a_logout_button_that_posts(presales: Client) -> None:
    page = presales.get(reverse("quotes:queue")).content.decode()
    # Django's LogoutView accepts POST only (configurator/urls.py names it "logout").
    assert f'<form method="post" action="{reverse("logout")}"' in page
    assert presales.post(reverse("logout")).status_code == 302
    assert presales.get(reverse("quotes:queue")).status_code == 302  # signed out


def test_inquiry_detail_shows_every_input(presales: Client) -> None:
    inquiry = make_inquiry()
    inquiry.active_share = 0.4
    inquiry.shared_prompt_tokens = 1500
    inquiry.private_config = {"model_type": "qwen3"}
    inquiry.save()
    page = presales.get(reverse("quotes:inquiry", args=[inquiry.pk])).content.decode()
    # SEED_INPUTS: 2,000 new conversations a day; the others set above.
    assert "New conversations per day" in page and "2,000" in page
    assert "40 %" in page and "1,500" in page
    assert "private model: the customer's uploaded config.json" in page


def test_inquiry_detail_shows_the_host_memory_cap_shared_tier_and_traffic(
    presales: Client,
) -> None:
    inquiry = make_inquiry()
    inquiry.max_host_memory_gb = 768
    inquiry.without_shared_tier = True
    inquiry.turns = 12
    inquiry.gap_profile = "agent"
    inquiry.busy_hour_active_share = 0.25
    inquiry.ttft_p95_ms = 1500.0
    inquiry.save()
    page = presales.get(reverse("quotes:inquiry", args=[inquiry.pk])).content.decode()
    facts = dict(re.findall(r"<dt>([^<]+)</dt><dd>([^<]*)</dd>", page))
    # The values set above, labelled with Inquiry's field names (models.py).
    assert facts["Most host memory per node (GB)"] == "768"
    assert facts["No shared tier"] == "yes"
    assert facts["Turns per conversation"] == "12"
    assert facts["Time between turns"] == "Agent"
    assert facts["Share active in the busiest hour"] == "25 %"
    assert facts["TTFT p95 target (ms)"] == "1,500"
    assert facts["TPOT target (ms)"] == "200"  # the model's default


def test_german_presales_texts(client: Client) -> None:
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "de"
    client.force_login(make_presales())
    quote = quote_create_from_inquiry(inquiry=make_inquiry(language="de"), user=None)
    page = client.get(reverse("quotes:detail", args=[quote.pk])).content.decode()
    # Item names in German from configurator/catalog/data/demo_prices.csv.
    assert f"Angebotsentwurf Nr. {quote.pk}" in page and "Abmelden" in page
    assert "4HE-GPU-Server" in page.split('name="sku"', 1)[1]  # the SKU dropdown
    assert "0 bis 50 % der Listensumme." in page
    inquiry_page = client.get(reverse("quotes:inquiry", args=[quote.inquiry_id])).content.decode()
    assert f"Entwurf Nr. {quote.pk}" in inquiry_page and "draft #" not in inquiry_page
    quote_issue(quote=quote)
    frozen = client.post(reverse("quotes:settings", args=[quote.pk]), {"discount_percent": "1"})
    assert frozen.status_code == 409
    quote.refresh_from_db()
    assert f"Das Angebot {quote.number} ist ausgestellt" in frozen.content.decode()


@pytest.mark.parametrize(
    ("language", "have", "expected"),
    [
        ("en", 1, "1 CPU, the plan needs 2"),
        ("en", 3, "3 CPUs, the plan needs 4"),
        ("de", 1, "1 CPU, die Auslegung braucht 2"),
        ("de", 0, "0 CPUs, die Auslegung braucht 2"),
    ],
)
def test_a_deviation_counts_its_items_in_the_singular_and_plural(
    language: str, have: int, expected: str
) -> None:
    # The seed chassis takes 2 CPUs (hardware.json); a quote edited down to one is
    # "1 CPU", not "1 CPUs" (configurator/quotes/deviations.py).
    with translation.override(language):
        text = deviation_text(Deviation("cpu", "short", have, have + 1 if have else 2, "pcs"))
    assert text == expected
