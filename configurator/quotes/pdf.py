"""Render a quote document to PDF with WeasyPrint.

The template is ``templates/pdf/quote.html`` with ``static/css/print.css``; fonts are
embedded from ``static/fonts`` through ``@font-face``. ``base_url`` is the static
directory, so the stylesheet and fonts resolve without a web server.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from django.conf import settings
from django.template.loader import render_to_string
from django.utils import translation
from weasyprint import CSS, HTML
from weasyprint.text.fonts import FontConfiguration

from configurator.quotes.document import as_decimal_document
from configurator.quotes.document_types import QuoteDocument
from configurator.quotes.terms import SELLER


def static_dir() -> Path:
    """The project's ``static/`` directory, the PDF's ``base_url``."""
    return Path(settings.BASE_DIR) / "static"


@cache
def _font_config() -> FontConfiguration:
    return FontConfiguration()


@cache
def _stylesheet() -> CSS:
    """``print.css`` parsed once per process, its fonts registered once."""
    return CSS(filename=str(static_dir() / "css" / "print.css"), font_config=_font_config())


def quote_html(document: QuoteDocument) -> str:
    """The PDF's HTML for ``document`` (from :mod:`configurator.quotes.document`)."""
    doc = as_decimal_document(document)
    seller = getattr(settings, "QUOTE_SELLER", SELLER)
    with translation.override(doc["language"]):
        return render_to_string("pdf/quote.html", {"doc": doc, "seller": seller})


def quote_pdf_render(document: QuoteDocument) -> bytes:
    """The quote as PDF bytes, in the document's language.

    Raises:
        KeyError: ``document`` lacks a required key.
    """
    html = HTML(string=quote_html(document), base_url=f"{static_dir()}/")
    pdf: bytes | None = html.write_pdf(stylesheets=[_stylesheet()], font_config=_font_config())
    if pdf is None:  # only when a target is given, which is never the case here
        raise RuntimeError("WeasyPrint returned no PDF")
    return pdf
