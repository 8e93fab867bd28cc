"""Wording on presales pages, the quote PDF and the bundle README: GPU names instead of
slugs, translated units, the "users take turns" reading of an empty active share, and the
notice before issuing an unverified quote."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.test import Client
from django.urls import reverse
from pypdf import PdfReader

from configurator.deployments.services import bundle_build
from configurator.planning.services import plan_stored
from configurator.quotes.document import document_from_quote
from configurator.quotes.pdf import quote_pdf_render
from configurator.quotes.services import quote_create_from_inquiry
from configurator.quotes.templatetags.quote_format import gpu_name
from configurator.verification.models import VerificationReport, VerificationStatus
from tests.quote_factories import SEED_INPUTS, make_inquiry, make_presales

pytestmark = pytest.mark.django_db

# sizing/data/hardware.json: name of the seed GPU slug "rtx-pro-6000-se"
SEED_GPU_NAME = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
NOTICE_EN = "Not verified yet: the issued PDF will say so. Verify first?"
# configurator/quotes/locale/de/LC_MESSAGES/django.po
NOTICE_DE = "Noch nicht geprüft: Das ausgestellte PDF wird das so angeben. Zuerst prüfen?"


def signed_in(client: Client, language: str) -> Client:
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = language
    client.force_login(make_presales())
    return client


def test_gpu_name_filter_falls_back_to_the_slug() -> None:
    assert gpu_name("rtx-pro-6000-se") == SEED_GPU_NAME
    assert gpu_name("no-such-gpu") == "no-such-gpu"


def test_german_pdf_names_the_gpu_and_translates_token() -> None:
    quote = quote_create_from_inquiry(inquiry=make_inquiry(language="de"), user=None)
    data = quote_pdf_render(document_from_quote(quote))
    pages = [page.extract_text() for page in PdfReader(io.BytesIO(data)).pages]
    text = " ".join(" ".join(pages).split())
    assert "(rtx-pro-6000-se)" not in text
    assert f"4 GPUs ({SEED_GPU_NAME})" in text  # seed: 4 GPUs per node
    assert "B/Token" in text and "B/token" not in text
    assert "8.192 Token" in text and "tokens" not in text  # seed: 8,192-token context


@pytest.mark.parametrize(
    ("language", "expected", "wrong"),
    [
        ("en", "not given (users take turns)", "all (not given)"),
        ("de", "nicht angegeben (Nutzer wechseln sich ab)", "alle (nicht angegeben)"),
    ],
)
def test_inquiry_page_names_gpu_and_reads_empty_share_as_taking_turns(
    client: Client, language: str, expected: str, wrong: str
) -> None:
    inquiry = make_inquiry(language=language)  # seed: no active share given
    assert inquiry.active_share is None
    page = signed_in(client, language).get(reverse("quotes:inquiry", args=[inquiry.pk]))
    html = page.content.decode()
    assert expected in html and wrong not in html
    assert f"4 × {SEED_GPU_NAME}" in html and "× rtx-pro-6000-se" not in html


@pytest.mark.parametrize(("language", "notice"), [("en", NOTICE_EN), ("de", NOTICE_DE)])
def test_issue_form_warns_until_verification_has_finished(
    client: Client, language: str, notice: str
) -> None:
    presales = signed_in(client, language)
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    url = reverse("quotes:detail", args=[quote.pk])
    assert notice in presales.get(url).content.decode()
    report = VerificationReport.objects.create(quote=quote, status=VerificationStatus.RUNNING)
    assert notice in presales.get(url).content.decode()  # running is not finished
    report.status = VerificationStatus.VERIFIED
    report.save(update_fields=["status"])
    page = presales.get(url).content.decode()
    assert notice not in page and reverse("quotes:issue", args=[quote.pk]) in page


def test_bundle_readme_names_the_gpu() -> None:
    data = bundle_build(plan=plan_stored(SEED_INPUTS))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        readme = archive.read("README.md").decode()
    assert f"4 × {SEED_GPU_NAME} per node" in readme  # seed: 4 GPUs per node
    assert "rtx-pro-6000-se per node" not in readme


# Words a PDF must not print: "Replik" is German for a retort (a replica is a
# "Replikat"), and "(s)"/"(en)" stand in for plurals the message catalog has.
NOT_WORDS = ("Replik ", "Repliken", "Replika ", "(en)", "(e)", "(s)")


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        # seed: 4 GPUs at tensor parallel size 1 are 4 engine instances; pyproject 0.1.0
        ("en", ["engine instances at tensor parallel size 1", "Sizing engine 0.1.0"]),
        (
            "de",
            [
                "Engine-Instanzen mit Tensor-Parallelität 1",
                "ganze Gespräche je Replikat",
                "Rechenkern 0.1.0",
            ],
        ),
    ],
)
def test_pdf_uses_real_plurals_and_translates_the_footer(
    language: str, expected: list[str]
) -> None:
    quote = quote_create_from_inquiry(inquiry=make_inquiry(language=language), user=None)
    data = quote_pdf_render(document_from_quote(quote))
    pages = [page.extract_text() for page in PdfReader(io.BytesIO(data)).pages]
    text = " ".join(" ".join(pages).split()) + " "
    for phrase in expected:
        assert phrase in text
    for wrong in NOT_WORDS:
        assert wrong not in text, text[max(0, text.find(wrong) - 120) : text.find(wrong) + 60]
    assert "Engine sizing" not in text
