"""The PDF job: ``render_quote_pdf(quote_id)`` renders a quote's PDF ahead of download;
:func:`quote_pdf_schedule` publishes it.

A repeated or redelivered job finds the stored PDF current and does nothing
(:func:`configurator.quotes.pdf_cache.quote_pdf_refresh`).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from configurator.celery import app
from configurator.quotes import pdf_cache
from configurator.quotes.models import Quote
from configurator.quotes.pdf_notice import pdf_not_queued

logger = logging.getLogger(__name__)


@app.task(acks_late=True, ignore_result=True, soft_time_limit=50, time_limit=60)
def render_quote_pdf(quote_id: int) -> str:
    """Render quote ``quote_id``'s PDF unless the stored one is current; the outcome."""
    return pdf_cache.quote_pdf_refresh(quote_id=quote_id)


def quote_pdf_schedule(quote: Quote) -> None:
    """Render ``quote``'s PDF in a Celery task once the current transaction commits.

    Only where ``settings.QUOTE_PDF_PRERENDER`` is on (by default when a broker is
    configured): without a worker the task would run inside the request that changed
    the quote, and the download renders it instead. A broker that cannot be reached
    (each publish gives up within ``settings.BROKER_TIMEOUT_SECONDS``) leaves the change
    saved: the failure is logged, the request that made the change says that the PDF
    follows (:mod:`configurator.quotes.pdf_notice`), and the download renders it.
    """
    if not settings.QUOTE_PDF_PRERENDER:
        return
    quote_id = quote.pk
    transaction.on_commit(lambda: _publish(quote_id))


def _publish(quote_id: int) -> None:
    try:
        render_quote_pdf.delay(quote_id)
    except Exception as exc:  # kombu's OperationalError, a timeout: the change is saved
        logger.warning("PDF of quote %s not queued (%s)", quote_id, exc)
        pdf_not_queued(quote_id)
