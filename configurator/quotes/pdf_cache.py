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
request (:mod:`configurator.quotes.pdf_download`).

Each version is rendered once: whoever renders it first claims its key in Django's cache
(:func:`quote_pdf_render_once`), and a second job or request for the same version finds
the claim and leaves the rendering to its holder. With ``REDIS_CACHE_URL`` the claims
are shared by every web and worker process; the claim lapses after the task's time limit,
so a worker killed while rendering does not block the version for good.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib import metadata
from pathlib import Path

from django.conf import settings
from django.core.cache import cache as shared_cache

from configurator.clients import fail_open
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


def stored_pdf(quote: Quote, key: str) -> bytes | None:
    """The stored PDF of ``quote`` if it shows the content ``key``, else None."""
    stored = (
        QuotePdf.objects.filter(quote=quote, content_key=key).values_list("pdf", flat=True).first()
    )
    return None if stored is None else bytes(stored)


def _claim_name(quote: Quote, key: str) -> str:
    return f"quote-pdf-rendering:{quote.pk}:{key}"


def is_being_rendered(quote: Quote, key: str) -> bool:
    """Whether a job or request holds the claim to render ``quote`` at ``key`` now
    (False when the cache cannot be reached)."""
    name = _claim_name(quote, key)
    return bool(fail_open("quote PDF claim", False, lambda: shared_cache.get(name)))


@contextmanager
def _render_claim(quote: Quote, key: str) -> Iterator[bool]:
    """Claim the rendering of ``quote`` at ``key``: yields whether this caller holds
    it, and gives it back afterwards. Without the cache every caller holds it."""
    name = _claim_name(quote, key)
    timeout = settings.CELERY_TASK_TIME_LIMIT
    claimed = fail_open(
        "quote PDF claim", True, lambda: shared_cache.add(name, True, timeout=timeout)
    )
    try:
        yield claimed
    finally:
        if claimed:
            fail_open("quote PDF claim", None, lambda: shared_cache.delete(name))


def quote_pdf_render_once(
    quote: Quote, document: QuoteDocument, key: str
) -> tuple[str, bytes | None]:
    """The PDF of ``document`` (``quote`` at content ``key``) and how it was had:
    ``("unchanged", pdf)`` stored, ``("rendered", pdf)`` rendered now and stored, or
    ``("rendering", None)`` while another job or request renders it.

    The store is read again once the claim is held, so a rendering that finished
    meanwhile is served instead of drawn a second time.
    """
    stored = stored_pdf(quote, key)
    if stored is not None:
        return "unchanged", stored
    with _render_claim(quote, key) as claimed:
        if not claimed:
            return "rendering", None
        stored = stored_pdf(quote, key)
        if stored is not None:
            return "unchanged", stored
        return "rendered", _render_and_store(quote, document, key)


def _render_and_store(quote: Quote, document: QuoteDocument, key: str) -> bytes:
    # Imported here for start-up speed: WeasyPrint loads only in a process that renders.
    from configurator.quotes.pdf import quote_pdf_render

    pdf = quote_pdf_render(document)
    QuotePdf.objects.update_or_create(quote=quote, defaults={"content_key": key, "pdf": pdf})
    return pdf


def quote_pdf_refresh(*, quote_id: int) -> str:
    """Render quote ``quote_id``'s PDF unless the stored one is current.

    Returns ``rendered``, ``unchanged``, ``rendering`` when another job or request holds
    the claim to render this version, or ``gone`` for a quote that no longer exists.
    """
    quote = Quote.objects.select_related("inquiry").filter(pk=quote_id).first()
    if quote is None:
        return "gone"
    document = document_from_quote(quote)
    outcome, _ = quote_pdf_render_once(quote, document, content_key(document))
    return outcome
