"""Middleware of the project's own: Django's message middleware, made lazy.

:class:`MessageMiddleware` keeps Django's ``django.contrib.messages`` behaviour and makes
the message storage (a signed cookie and the session) only when a view or a template
first uses ``request._messages``; a request that never does (the live estimate, every
public page) neither builds it nor updates it on the way out.
"""

from __future__ import annotations

from functools import partial

from django.contrib.messages import middleware
from django.contrib.messages.storage import default_storage
from django.http import HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject, empty


class MessageMiddleware(middleware.MessageMiddleware):
    """Django's :class:`~django.contrib.messages.middleware.MessageMiddleware` with the
    storage made at its first use (module docstring)."""

    def process_request(self, request: HttpRequest) -> None:
        request._messages = SimpleLazyObject(partial(default_storage, request))  # type: ignore[attr-defined]

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        stored = getattr(request, "_messages", None)
        # type() and _wrapped read the lazy object itself without making the storage
        if type(stored) is SimpleLazyObject and stored._wrapped is empty:
            return response  # never used: nothing was added, read or has to be stored
        return super().process_response(request, response)
