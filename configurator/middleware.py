"""Middleware of the project's own: Django's message middleware, made lazy,
django-htmx's middleware with the ``HX-Request`` test made once per request, and
Django's authentication middleware that outlasts a database outage, and the
``Permissions-Policy`` header.

:class:`MessageMiddleware` keeps Django's ``django.contrib.messages`` behaviour and makes
the message storage (a signed cookie and the session) only when a view or a template
first uses ``request._messages``; a request that never does (the live estimate, every
public page) neither builds it nor updates it on the way out.

:class:`HtmxMiddleware` gives every request django-htmx's
:class:`~django_htmx.middleware.HtmxDetails`, whose truth value (whether htmx sent the
request) the view and the templates test several times per request: it is read from the
headers at the first test and kept, as the details' other properties are.

:class:`AuthenticationMiddleware` is Django's, except that a visitor whose session or
user cannot be read because the database is down counts as signed out (and the outage
is logged): the public pages, which need no database, are served to a returning visitor
with a session cookie as to a new one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import cached_property, partial

from django.contrib.auth import get_user
from django.contrib.auth import middleware as auth_middleware
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.contrib.messages import middleware
from django.contrib.messages.storage import default_storage
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.utils.functional import SimpleLazyObject, empty
from django_htmx import middleware as htmx_middleware

logger = logging.getLogger(__name__)


def _user_or_anonymous(request: HttpRequest) -> AbstractBaseUser | AnonymousUser:
    try:
        return get_user(request)
    except DatabaseError as exc:
        logger.warning("user not read, served as signed out: database unavailable (%s)", exc)
        return AnonymousUser()


class AuthenticationMiddleware(auth_middleware.AuthenticationMiddleware):
    """Django's :class:`~django.contrib.auth.middleware.AuthenticationMiddleware` whose
    ``request.user`` is anonymous when the database cannot be reached (module docstring)."""

    def process_request(self, request: HttpRequest) -> None:
        super().process_request(request)
        request.user = SimpleLazyObject(partial(_user_or_anonymous, request))  # type: ignore[assignment]


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


class HtmxDetails(htmx_middleware.HtmxDetails):
    """django-htmx's request details with their truth value read once (module
    docstring)."""

    @cached_property
    def _from_htmx(self) -> bool:
        return super().__bool__()

    def __bool__(self) -> bool:
        return self._from_htmx


class HtmxMiddleware(htmx_middleware.HtmxMiddleware):
    """django-htmx's :class:`~django_htmx.middleware.HtmxMiddleware` handing out
    :class:`HtmxDetails`."""

    def __call__(self, request: HttpRequest) -> HttpResponseBase | Awaitable[HttpResponseBase]:
        if self.async_mode:
            return self.__acall__(request)
        request.htmx = HtmxDetails(request)  # type: ignore[attr-defined]
        return self.get_response(request)

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        request.htmx = HtmxDetails(request)  # type: ignore[attr-defined]
        return await self.get_response(request)  # type: ignore[no-any-return, misc]


PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()"
    for feature in (
        "camera",
        "microphone",
        "geolocation",
        "payment",
        "usb",
        "serial",
        "bluetooth",
        "hid",
        "display-capture",
    )
)
"""The browser features the site never uses, switched off for it and anything it frames
(W3C Permissions Policy, https://www.w3.org/TR/permissions-policy/)."""


class PermissionsPolicyMiddleware:
    """Adds :data:`PERMISSIONS_POLICY` to every answer that sets none of its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return response
