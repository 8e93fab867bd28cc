"""A quote change saved while its PDF job could not be published says so.

:func:`~configurator.quotes.tasks.quote_pdf_schedule` publishes the PDF job once the
change is committed; when the broker cannot be reached the change stays saved, the
download renders the PDF instead, and :func:`pdf_not_queued` notes it for the request
that made the change. :class:`PdfNoticeMiddleware` then adds one message to that
request: saved, and the PDF follows.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

from django.contrib import messages
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.translation import gettext

_NOT_QUEUED: ContextVar[list[int] | None] = ContextVar("quote_pdf_not_queued", default=None)


def pdf_not_queued(quote_id: int) -> None:
    """Note that quote ``quote_id``'s PDF job was not published in this request."""
    noted = _NOT_QUEUED.get()
    if noted is not None:
        noted.append(quote_id)


class PdfNoticeMiddleware:
    """Adds "saved; the PDF follows" to a request whose quote change left its PDF job
    unpublished (module docstring); place it after the message middleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        token = _NOT_QUEUED.set([])
        try:
            response = self.get_response(request)
            if _NOT_QUEUED.get():
                messages.info(
                    request,
                    gettext(
                        "The change is saved. Its PDF follows: the task queue cannot be "
                        "reached just now, so the PDF is made when it is first downloaded."
                    ),
                )
        finally:
            _NOT_QUEUED.reset(token)
        return response
