"""The verification report reads in the reader's language on the page and in the quote's
language in the PDF, whatever language the job ran under; its figures are formatted per
language and informational checks carry no pass/fail label (second QA round of issue 8).

Expected figures come from the bundled ground-truth cases
(``sizing/data/ground_truth_cases.json``, case ids named at each assertion), the German
catalogue ``configurator/verification/locale/de/LC_MESSAGES/django.po`` and the rules of
``docs/verification.md``.
"""

from __future__ import annotations

import io
import re

import pytest
from django.urls import reverse
from django.utils import translation
from pypdf import PdfReader

from configurator.quotes.document import document_from_quote
from configurator.quotes.pdf import quote_pdf_render
from configurator.quotes.services import quote_create_from_inquiry, quote_issue
from configurator.verification.comparison import (
    FALLBACK_TOLERANCE,
    GPU_NAME_WIDTH,
    ModelClass,
    fallback_note,
    record_label,
)
from configurator.verification.models import BenchmarkRecord, VerificationReport
from configurator.verification.outcome import note_text
from configurator.verification.services import benchmarks_load_initial
from configurator.verification.tasks import verification_start
from tests.quote_factories import make_inquiry, make_presales

pytestmark = pytest.mark.usefixtures("eager_tasks")


def verified_quote(capture, *, language: str, ui_language: str) -> VerificationReport:
    """The seed inquiry's quote in ``language``, verified while the UI is in ``ui_language``."""
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(language=language), user=None)
    with translation.override(ui_language), capture(execute=True):
        verification_start(quote=quote)
    return VerificationReport.objects.get(quote=quote)


def pdf_text(report: VerificationReport) -> str:
    quote = quote_issue(quote=report.quote)
    pdf = quote_pdf_render(document_from_quote(quote))
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)
    return re.sub(r"\s+", " ", text)


def h200_alternative(report: VerificationReport):
    # The bundled cases hold no H200 start, so the seed quote's H200 alternative has no
    # comparable data (tests/web/test_verification_outcome.py names the same gap).
    return next(a for a in report.quote.alternatives.all() if "H200" in a.label)


@pytest.mark.django_db
def test_summary_is_stored_in_both_languages_with_titles_in_the_same_language(
    django_capture_on_commit_callbacks,
):
    report = verified_quote(django_capture_on_commit_callbacks, language="en", ui_language="de")
    alt = h200_alternative(report)
    english, german = alt.label_in("en"), alt.label_in("de")
    assert english != german  # the titles are worded per language (quotes/pricing.py)
    assert f"No comparable data for {english}." in report.summary_in("en")
    assert german not in report.summary_in("en")
    assert f"Keine vergleichbaren Daten für {german}." in report.summary_in("de")
    assert english not in report.summary_in("de")
    # the legacy field stays English, whatever language the job ran under
    assert report.summary == report.summary_in("en")
    assert "checks counted against" in report.summary_in("en")
    assert "Prüfungen gewertet gegen" in report.summary_in("de")


@pytest.mark.django_db
def test_english_pdf_of_a_job_run_in_german_is_english(django_capture_on_commit_callbacks):
    report = verified_quote(django_capture_on_commit_callbacks, language="en", ui_language="de")
    with translation.override("de"):  # a German-speaking presales downloads the PDF
        flat = pdf_text(report)
    # The customer's wording (configurator/verification/customer.py), in the quote's language.
    assert "The sizing was compared with" in flat
    assert "Not yet compared with measurements:" in flat
    assert "verglichen" not in flat and "Innerhalb der Toleranz" not in flat


@pytest.mark.django_db
def test_german_pdf_of_a_job_run_in_english_is_german(django_capture_on_commit_callbacks):
    report = verified_quote(django_capture_on_commit_callbacks, language="de", ui_language="en")
    with translation.override("en"):
        flat = pdf_text(report)
    assert "Die Auslegung wurde mit" in flat
    assert "Noch nicht mit Messungen verglichen:" in flat
    assert "The sizing was compared" not in flat


@pytest.mark.django_db
def test_page_follows_the_readers_language(client, django_capture_on_commit_callbacks):
    report = verified_quote(django_capture_on_commit_callbacks, language="en", ui_language="en")
    client.force_login(make_presales("presales2"))
    url = reverse("verification:report", args=[report.quote.pk])
    german = client.get(url, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    alt = h200_alternative(report)
    # German catalogue (locale/de): status names, table headers, section and notes
    for text in (
        "Innerhalb der Toleranz",  # the seed quote's status: case-082 is a class fallback
        "Vorhergesagt",
        "Gemessen",
        "Abweichung",
        "Nicht gewertet (zur Information)",
        "KV-Pool je GPU",
        "ein anderes Modell derselben Klasse",
        "die veröffentlichte Spanne wurde für Llama 3.1 8B",
        "Keine vergleichbaren Daten für",
        alt.label_in("de"),
    ):
        assert text in german, text
    assert "Within tolerance" not in german and "Predicted" not in german
    assert "Within tolerance" in english and "No comparable data for" in english
    assert alt.label_in("en") in english


@pytest.mark.django_db
def test_token_counts_are_whole_numbers_grouped_per_language(
    client, django_capture_on_commit_callbacks
):
    report = verified_quote(django_capture_on_commit_callbacks, language="en", ui_language="en")
    client.force_login(make_presales("presales2"))
    url = reverse("verification:report", args=[report.quote.pk])
    german = client.get(url, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    token_checks = report.checks.filter(quantity="kv_cache_tokens")
    assert token_checks  # case-082 logs its KV pool in tokens
    for check in token_checks:
        measured = round(check.measured)
        assert measured >= 1000  # so the grouping shows
        assert f"{measured:,} tokens" in english
        assert f"{measured:,} Tokens".replace(",", ".") in german
    assert not re.search(r"\d,00 (tokens|Tokens)", english + german)
    assert not re.search(r"\d\.00 (tokens|Tokens)", english + german)


@pytest.mark.django_db
def test_informational_checks_carry_no_pass_label(client, django_capture_on_commit_callbacks):
    report = verified_quote(django_capture_on_commit_callbacks, language="en", ui_language="en")
    client.force_login(make_presales("presales2"))
    url = reverse("verification:report", args=[report.quote.pk])
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    german = client.get(url, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    _, _, informational_en = english.partition("Not counted (informational)")
    _, _, informational_de = german.partition("Nicht gewertet (zur Information)")
    informational = list(report.checks.filter(counted=False))
    # the published TTFT range (vLLM blog: 2× to 22×, Llama 3.1 8B on an H100) is far
    # from the seed plan's ratio, yet it must not read as a pass or a failure
    assert informational
    for check in informational:
        with translation.override("en"):
            assert f"informational, not rated ({check.deviation_display})" in informational_en
        with translation.override("de"):
            assert f"zur Information, nicht bewertet ({check.deviation_display})" in (
                informational_de
            )
    section_en = informational_en.split("</table>")[0]
    for label in ("Within tolerance", "Verified", "Deviates"):
        assert label not in section_en


@pytest.mark.django_db
def test_long_gpu_names_end_at_a_word():
    benchmarks_load_initial()
    # case-082's GPU is described as "96GB-class GPU (97,887 MiB total; consistent with
    # RTX PRO 6000 Blackwell), shared with ~11.9 GiB of other processes"
    record = BenchmarkRecord.objects.get(case_id="case-082")
    assert len(record.gpu_type) > GPU_NAME_WIDTH
    gpu_part = record_label(record).rsplit(", TP ", 1)[1].split(", ", 1)[1]
    assert gpu_part.endswith(" …")
    kept = gpu_part.removesuffix(" …").split(" ")
    assert kept == record.gpu_type.split(" ")[: len(kept)]  # whole words only
    assert len(gpu_part) <= GPU_NAME_WIDTH


def test_fallback_note_reads_in_both_languages():
    # comparison.fallback_note's wording; tolerance ±15 % (FALLBACK_TOLERANCE)
    class Record:
        model_id = "Qwen/Qwen3-14B"

    note = fallback_note(Record(), ModelClass(attention="full", size_band="20-50"))
    with translation.override("de"):
        german = note_text(note)
    with translation.override("en"):
        english = note_text(note)
    tolerance = f"±{FALLBACK_TOLERANCE * 100:.0f} %"
    assert german == (
        "ein anderes Modell derselben Klasse (Attention full, 20-50 GiB Gewichte): "
        f"Qwen/Qwen3-14B; Toleranz {tolerance}, bestenfalls innerhalb der Toleranz"
    )
    assert english.startswith("another model of the same class (full attention")
    assert "Qwen/Qwen3-14B" in english and tolerance in english


@pytest.mark.django_db
def test_quote_editor_shows_the_summary_in_the_readers_language(
    client, django_capture_on_commit_callbacks
):
    report = verified_quote(django_capture_on_commit_callbacks, language="en", ui_language="en")
    client.force_login(make_presales("presales2"))
    url = reverse("quotes:detail", args=[report.quote.pk])
    german = client.get(url, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    # locale/de: "%(count)d checks counted" → "%(count)d Prüfungen gewertet"
    assert "Prüfungen gewertet gegen" in german and "checks counted against" not in german
    assert "checks counted against" in english and "Prüfungen gewertet" not in english
