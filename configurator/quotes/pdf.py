"""Render a quote document to PDF with WeasyPrint.

The template is ``templates/pdf/quote.html`` with ``static/css/print.css``; fonts are
embedded from ``static/fonts`` through ``@font-face``. ``base_url`` is the static
directory, so the stylesheet and fonts resolve without a web server.

WeasyPrint allocates objects (boxes, styles, glyph runs) by the million. At Python's
default threshold (a collection every 700 allocations) the four-alternative draft
triggered some 200 collections, two of them of the whole heap, about 150 ms of its 0.85 s
of CPU (``docs/benchmarks.md``); while a PDF renders, the youngest generation is
collected every :data:`RENDER_GC_THRESHOLD` allocations instead (one collection, 23 ms).
"""

from __future__ import annotations

import base64
import gc
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
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


RENDER_GC_THRESHOLD = 100_000
"""Allocations between two collections of the youngest generation while a PDF renders
(Python's default: 700); the objects left over are collected when the rendering ends."""

_gc_lock = threading.Lock()
_gc_renderings = 0
_gc_saved: tuple[int, int, int] = gc.get_threshold()


@contextmanager
def _rendering_gc() -> Iterator[None]:
    """Raise the youngest generation's threshold while any thread renders; the first
    rendering to start saves the process's thresholds, the last to end restores them and
    collects the youngest generation."""
    global _gc_renderings, _gc_saved
    with _gc_lock:
        if _gc_renderings == 0:
            _gc_saved = gc.get_threshold()
            gc.set_threshold(max(RENDER_GC_THRESHOLD, _gc_saved[0]), *_gc_saved[1:])
        _gc_renderings += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_renderings -= 1
            if _gc_renderings == 0:
                gc.set_threshold(*_gc_saved)
                gc.collect(0)  # what is left over, here rather than in the next caller


def quote_pdf_render(document: QuoteDocument) -> bytes:
    """The quote as PDF bytes, in the document's language.

    Raises:
        KeyError: ``document`` lacks a required key.
    """
    with _rendering_gc():
        html = HTML(string=charts_as_images(quote_html(document)), base_url=f"{static_dir()}/")
        pdf: bytes | None = html.write_pdf(stylesheets=[_stylesheet()], font_config=_font_config())
    if pdf is None:  # only when a target is given, which is never the case here
        raise RuntimeError("WeasyPrint returned no PDF")
    return pdf
