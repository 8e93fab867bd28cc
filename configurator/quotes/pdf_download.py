"""What a download of a quote's PDF gets: the stored PDF of the quote as it is now, or
word that it is being prepared; a request never renders a copy a job also renders.

Where the worker renders PDFs (``settings.QUOTE_PDF_PRERENDER``), a download whose
version is not stored yet leaves the rendering to the job: it asks for one (at most once
per :data:`ASK_AGAIN_AFTER_S` for the same version, and not while a job holds the claim,
:func:`configurator.quotes.pdf_cache.is_being_rendered`) and answers that the PDF is
being prepared; the page asks again until it is stored. Only when the job cannot be
published (the broker is down) does the request render it, as it does where no worker
runs: then it is the only rendering, under the same claim
(:func:`configurator.quotes.pdf_cache.quote_pdf_render_once`).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.cache import cache as shared_cache
from django.db import transaction

from configurator.clients import fail_open
from configurator.quotes.document import document_from_quote
from configurator.quotes.models import Quote
from configurator.quotes.pdf_cache import (
    content_key,
    is_being_rendered,
    quote_pdf_render_once,
    stored_pdf,
)
from configurator.quotes.tasks import render_quote_pdf

logger = logging.getLogger(__name__)

ASK_AGAIN_AFTER_S = 30
"""A download asks the worker again for a version still not stored after this long (a
job lost with a worker that died before it started)."""


def _ask_worker(quote: Quote, key: str) -> bool:
    """Publish a rendering job for ``quote`` at ``key`` unless one was asked for lately
    or holds the claim; False when the broker refused it."""
    if is_being_rendered(quote, key):
        return True
    marker = f"quote-pdf-asked:{quote.pk}:{key}"
    first = fail_open(
        "quote PDF job", True, lambda: shared_cache.add(marker, True, ASK_AGAIN_AFTER_S)
    )
    if not first:
        return True
    quote_id = quote.pk
    try:
        transaction.on_commit(lambda: render_quote_pdf.delay(quote_id))
    except Exception as exc:  # the broker's error, whatever its client raises
        logger.warning("quote %s: PDF job not published, rendering it here (%s)", quote_id, exc)
        fail_open("quote PDF job", None, lambda: shared_cache.delete(marker))
        return False
    return True


def quote_pdf_download(*, quote: Quote) -> bytes | None:
    """The PDF of ``quote`` as it is now, or None while it is being prepared.

    Served from the store when its content is unchanged. Otherwise, where the worker
    renders PDFs, a job is asked for and None returned (the job's PDF is served by a
    later download); without a worker, or with the broker down, it is rendered here
    unless another request or job is rendering it (None).
    """
    document = document_from_quote(quote)
    key = content_key(document)
    stored = stored_pdf(quote, key)
    if stored is not None:
        return stored
    if settings.QUOTE_PDF_PRERENDER and _ask_worker(quote, key):
        return stored_pdf(quote, key)  # a job run in-process (eager tasks) has stored it
    _, pdf = quote_pdf_render_once(quote, document, key)
    return pdf
