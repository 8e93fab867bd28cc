"""Quote PDFs rendered ahead by the Celery job and served from the store while the
quote's content is unchanged (configurator.quotes.pdf_cache), each version rendered once:
a download never renders a copy the job renders (configurator.quotes.pdf_download).

The seed example's inquiry and prices come from tests/quote_factories.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from configurator.inquiries import traffic_chart, ttft_chart
from configurator.quotes import pdf
from configurator.quotes.document import document_from_quote
from configurator.quotes.models import Quote, QuotePdf
from configurator.quotes.pdf_cache import (
    RENDERER_FILES,
    content_key,
    quote_pdf_refresh,
    quote_pdf_render_once,
)
from configurator.quotes.services import (
    quote_create_from_inquiry,
    quote_issue,
    quote_line_set_quantity,
)
from tests.quote_factories import make_inquiry, make_presales

pytestmark = pytest.mark.django_db

STORED = b"%PDF-1.7 the stored rendering"


def _draft(client: Client | None = None) -> Quote:
    user = make_presales()
    if client is not None:
        client.force_login(user)
    return quote_create_from_inquiry(inquiry=make_inquiry(), user=user)


@pytest.fixture(autouse=True)
def _no_claims_left() -> None:
    """Claims and job requests of an earlier test's quote (same id, same content) are
    not this test's."""
    cache.clear()


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per PDF WeasyPrint draws (the real renderer, counted)."""
    drawn: list[int] = []
    real = pdf.quote_pdf_render

    def counted(document: Any) -> bytes:
        drawn.append(1)
        return real(document)

    monkeypatch.setattr(pdf, "quote_pdf_render", counted)
    return drawn


def _download(client: Client, quote: Quote) -> bytes:
    response = client.get(reverse("quotes:pdf", args=[quote.pk]))
    assert response.status_code == 200
    return response.content


def test_issuing_renders_the_pdf_in_the_job_and_the_download_serves_it(
    settings: Any, eager_tasks: None, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    settings.QUOTE_PDF_PRERENDER = True
    with django_capture_on_commit_callbacks(execute=True):
        quote = _draft(client)
    with django_capture_on_commit_callbacks(execute=True):
        quote = quote_issue(quote=quote)
    row = QuotePdf.objects.get(quote=quote)
    assert row.content_key == content_key(document_from_quote(quote))
    assert bytes(row.pdf).startswith(b"%PDF-")
    # The download takes the stored bytes as they are: mark them to tell them apart.
    QuotePdf.objects.filter(pk=row.pk).update(pdf=STORED)
    assert _download(client, quote) == STORED


def test_a_changed_draft_is_rendered_again_and_stored(client: Client) -> None:
    quote = _draft(client)
    first = _download(client, quote)
    assert first.startswith(b"%PDF-")
    assert QuotePdf.objects.filter(quote=quote).count() == 1
    QuotePdf.objects.filter(quote=quote).update(pdf=STORED)
    assert _download(client, quote) == STORED  # unchanged: served from the store

    line = quote.alternatives.first().lines.first()  # type: ignore[union-attr]
    quote_line_set_quantity(line=line, quantity=line.quantity + 1)
    fresh = _download(client, quote)
    assert fresh != STORED and fresh.startswith(b"%PDF-")
    row = QuotePdf.objects.get(quote=quote)
    assert row.content_key == content_key(document_from_quote(quote))
    assert bytes(row.pdf) == fresh


def test_the_job_renders_once_and_skips_a_current_or_deleted_quote() -> None:
    quote = _draft()
    assert quote_pdf_refresh(quote_id=quote.pk) == "rendered"
    assert quote_pdf_refresh(quote_id=quote.pk) == "unchanged"
    assert quote_pdf_refresh(quote_id=quote.pk + 1000) == "gone"


def test_a_download_right_after_creation_waits_for_the_job_and_renders_nothing(
    settings: Any,
    eager_tasks: None,
    client: Client,
    renders: list[int],
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.QUOTE_PDF_PRERENDER = True
    with django_capture_on_commit_callbacks() as created:  # the job waits in the queue
        quote = _draft(client)
    url = reverse("quotes:pdf", args=[quote.pk])
    with django_capture_on_commit_callbacks() as asked:
        response = client.get(url, headers={"Accept-Language": "de"})
    assert response.status_code == 202 and response["Retry-After"] == "2"
    assert "wird erstellt" in response.content.decode()
    assert '<meta http-equiv="refresh" content="2">' in response.content.decode()
    assert renders == [] and not QuotePdf.objects.filter(quote=quote).exists()
    assert len(asked) == 1  # it asks the worker for this version once
    with django_capture_on_commit_callbacks() as asked_again:
        assert client.get(url).status_code == 202
    assert asked_again == []

    for job in [*created, *asked]:  # the worker runs both jobs: one draws, one finds it
        job()
    assert renders == [1]
    stored = bytes(QuotePdf.objects.get(quote=quote).pdf)
    assert stored.startswith(b"%PDF-") and _download(client, quote) == stored
    assert renders == [1]


def test_a_version_another_job_is_rendering_is_not_drawn_again(
    client: Client, renders: list[int]
) -> None:
    quote = _draft(client)
    document = document_from_quote(quote)
    key = content_key(document)
    # The claim a rendering job takes (configurator.quotes.pdf_cache) is held meanwhile.
    cache.add(f"quote-pdf-rendering:{quote.pk}:{key}", True, 60)
    assert quote_pdf_refresh(quote_id=quote.pk) == "rendering"
    assert quote_pdf_render_once(quote, document, key) == ("rendering", None)
    assert client.get(reverse("quotes:pdf", args=[quote.pk])).status_code == 202
    assert renders == []
    cache.delete(f"quote-pdf-rendering:{quote.pk}:{key}")
    assert _download(client, quote).startswith(b"%PDF-") and renders == [1]


def test_the_key_follows_the_content() -> None:
    quote = _draft()
    document = document_from_quote(quote)
    assert content_key(document) == content_key(document_from_quote(quote))
    assert content_key({**document, "notes": "Lieferung in KW 3"}) != content_key(document)


def test_the_renderer_covers_every_template_tag_library_and_chart_the_pdf_uses() -> None:
    # A deployment that changes any of them must give every quote a new key, or the
    # download serves a PDF drawn by the old code.
    base = Path(settings.BASE_DIR)
    covered = {p for pattern in RENDERER_FILES for p in base.glob(pattern)}
    templates, libraries = ["pdf/quote.html"], set()
    for name in templates:  # grows as includes are found
        text = (base / "templates" / name).read_text(encoding="utf-8")
        assert base / "templates" / name in covered, name
        for include in re.findall(r'{%\s*include\s+"([^"]+)"', text):
            if include not in templates:
                templates.append(include)
        for load in re.findall(r"{%\s*load\s+([^%]+)%}", text):
            libraries.update(load.split())
    assert {"inquiries/_note.html", "inquiries/_ttft_chart.svg"} <= set(templates)
    ours = {lib: list(base.glob(f"configurator/*/templatetags/{lib}.py")) for lib in libraries}
    assert {"quote_format", "measurements", "verdict_notes"} <= {k for k, v in ours.items() if v}
    for lib, paths in ours.items():
        assert all(path in covered for path in paths), lib
    for module in (ttft_chart, traffic_chart):
        assert Path(module.__file__ or "") in covered, module.__name__
