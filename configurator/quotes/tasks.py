"""The PDF job: ``render_quote_pdf(quote_id)`` renders a quote's PDF ahead of download.

A repeated or redelivered job finds the stored PDF current and does nothing
(:func:`configurator.quotes.pdf_cache.quote_pdf_refresh`).
"""

from __future__ import annotations

from configurator.celery import app
from configurator.quotes import pdf_cache


@app.task(acks_late=True, ignore_result=True, soft_time_limit=50, time_limit=60)
def render_quote_pdf(quote_id: int) -> str:
    """Render quote ``quote_id``'s PDF unless the stored one is current; the outcome."""
    return pdf_cache.quote_pdf_refresh(quote_id=quote_id)
