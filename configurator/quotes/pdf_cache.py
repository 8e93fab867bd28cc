"""Quote PDFs rendered ahead and cached by the quote's content.

A PDF shows exactly its document (:func:`configurator.quotes.document.document_from_quote`)
put through the renderer: the PDF templates, the print stylesheet, the fonts, the
translations and the code that formats and draws them. :func:`content_key` hashes both,
so an unchanged quote has an unchanged key and its stored PDF (:class:`QuotePdf`) is
served as it is; any change to the quote, to its verification, to the day a draft is
dated, or a deployment that changes the renderer, gives a new key and a new rendering.

Rendering a four-alternative draft takes some 0.7 s of CPU (``docs/benchmarks.md``), so
it happens in a Celery task when a quote is created, changed or issued
(:func:`configurator.quotes.tasks.quote_pdf_schedule`), not in the presales user's
request. A download finds the stored PDF; when the task has not
finished yet (or no worker runs), the download renders it once and stores it for the
next one.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import metadata
from pathlib import Path

from django.conf import settings

from configurator.quotes.document import document_from_quote
from configurator.quotes.document_types import QuoteDocument
from configurator.quotes.models import Quote, QuotePdf
from configurator.quotes.terms import SELLER

RENDERER_FILES = (
    "templates/pdf/**/*",
    "templates/inquiries/_note.html",
    "templates/inquiries/_ttft_chart.svg",
    "templates/inquiries/_traffic_chart.svg",
    "static/css/print.css",
    "static/fonts/*",
    "configurator/quotes/**/*.py",
    "configurator/inquiries/templatetags/*.py",
    "configurator/inquiries/ttft_chart.py",
    "configurator/inquiries/traffic_chart.py",
    "configurator/inquiries/chart_ticks.py",
    "configurator/numbers.py",
    "configurator/**/locale/*/LC_MESSAGES/*.mo",
    "sizing/**/*.py",
)
"""What turns a document into a PDF, as globs under ``BASE_DIR``: the PDF templates and
the estimate's templates they include, the template tags they load and the chart
geometry the document's charts are drawn from."""


@cache
def renderer_fingerprint() -> str:
    """SHA-256 over the renderer's files, WeasyPrint's version and the letterhead; read
    once per process (a deployment restarts the processes)."""
    base = Path(settings.BASE_DIR)
    digest = hashlib.sha256()
    paths = sorted({p for pattern in RENDERER_FILES for p in base.glob(pattern) if p.is_file()})
    for path in paths:
        if "__pycache__" in path.parts:
            continue
        digest.update(str(path.relative_to(base)).encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    digest.update(metadata.version("weasyprint").encode())
    seller = getattr(settings, "QUOTE_SELLER", SELLER)
    digest.update(json.dumps(seller, sort_keys=True).encode())
    return digest.hexdigest()


def content_key(document: QuoteDocument) -> str:
    """SHA-256 (64 hex digits) of ``document`` (as canonical JSON) and the renderer."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(f"{renderer_fingerprint()}\n{text}".encode()).hexdigest()


def _render_and_store(quote: Quote, document: QuoteDocument, key: str) -> bytes:
    # Imported here for start-up speed: WeasyPrint loads only in a process that renders.
    from configurator.quotes.pdf import quote_pdf_render

    pdf = quote_pdf_render(document)
    QuotePdf.objects.update_or_create(quote=quote, defaults={"content_key": key, "pdf": pdf})
    return pdf


def quote_pdf_bytes(quote: Quote) -> bytes:
    """The PDF of ``quote`` as it is now: the stored one when its content is unchanged,
    else rendered (and stored) now."""
    document = document_from_quote(quote)
    key = content_key(document)
    stored = (
        QuotePdf.objects.filter(quote=quote, content_key=key).values_list("pdf", flat=True).first()
    )
    if stored is not None:
        return bytes(stored)
    return _render_and_store(quote, document, key)


def quote_pdf_refresh(*, quote_id: int) -> str:
    """Render quote ``quote_id``'s PDF unless the stored one is current.

    Returns ``rendered``, ``unchanged``, or ``gone`` for a quote that no longer exists.
    """
    quote = Quote.objects.select_related("inquiry").filter(pk=quote_id).first()
    if quote is None:
        return "gone"
    document = document_from_quote(quote)
    key = content_key(document)
    if QuotePdf.objects.filter(quote=quote, content_key=key).exists():
        return "unchanged"
    _render_and_store(quote, document, key)
    return "rendered"
