"""Render a quote document to PDF with WeasyPrint.

The template is ``templates/pdf/quote.html`` with ``static/css/print.css``; fonts are
embedded from ``static/fonts`` through ``@font-face``. ``base_url`` is the static
directory, so the stylesheet and fonts resolve without a web server.
"""

from __future__ import annotations

import base64
import re
from functools import cache
from pathlib import Path
from xml.etree import ElementTree

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


_BEFORE_BLOCK_TAG = re.compile(
    r">\s+<(?=/?(?:body|div|section|header|h[1-6]|p|ul|ol|li|table|thead|tbody|tfoot|tr|th|td"
    r"|figure|figcaption|pre|svg|rect|line|polyline|text|g)[\s>/])"
)
"""Whitespace before a block, table or SVG element's tag: it prints nothing, yet each run
is a node WeasyPrint parses and boxes."""


def quote_html(document: QuoteDocument) -> str:
    """The PDF's HTML for ``document`` (from :mod:`configurator.quotes.document`), without
    the whitespace the templates' indentation leaves between block-level tags."""
    seller = getattr(settings, "QUOTE_SELLER", SELLER)
    with translation.override(document["language"]):
        doc = as_decimal_document(document)  # the charts' tick labels in its language
        html = render_to_string("pdf/quote.html", {"doc": doc, "seller": seller})
    return _BEFORE_BLOCK_TAG.sub("><", html)


_INLINE_SVG = re.compile(r"<svg\b.*?</svg>", re.S)


def _svg_as_image(match: re.Match[str]) -> str:
    svg = match.group(0)
    try:
        ElementTree.fromstring(svg)
    except ElementTree.ParseError:
        return svg  # not XML (an HTML-only entity, say): the HTML parser still draws it
    data = base64.b64encode(svg.encode()).decode("ascii")
    return f'<img class="chart-image" src="data:image/svg+xml;base64,{data}" alt="">'


def charts_as_images(html: str) -> str:
    """``html`` with each inline ``<svg>`` chart that is well-formed XML handed to
    WeasyPrint as an SVG image of its own size: the image is parsed by the XML parser,
    not the HTML tokenizer, and its elements stay out of the CSS cascade; it is drawn the
    same, text included (about 5 % of the four-alternative draft's CPU). A chart that is
    not XML stays inline, where the HTML parser accepts it."""
    return _INLINE_SVG.sub(_svg_as_image, html)


def quote_pdf_render(document: QuoteDocument) -> bytes:
    """The quote as PDF bytes, in the document's language.

    Raises:
        KeyError: ``document`` lacks a required key.
    """
    html = HTML(string=charts_as_images(quote_html(document)), base_url=f"{static_dir()}/")
    pdf: bytes | None = html.write_pdf(stylesheets=[_stylesheet()], font_config=_font_config())
    if pdf is None:  # only when a target is given, which is never the case here
        raise RuntimeError("WeasyPrint returned no PDF")
    return pdf
