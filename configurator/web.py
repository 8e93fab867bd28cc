"""What every view shares: the request type django-htmx hands them and the staff check.

- :class:`HtmxHttpRequest`: a request that passed through django-htmx's middleware
  (``request.htmx`` is its :class:`~django_htmx.middleware.HtmxDetails`), for typing;
- :func:`staff_required`: the presales areas (queue, quote editor, verification,
  bundle download) admit active staff users only; anyone else is sent to the login
  page (``settings.LOGIN_URL``); their answers (pages, quote PDFs) are never stored by
  a browser or a proxy (``Cache-Control: private, no-store``);
- :func:`not_found`: the site's 404 page (``templates/404.html``) in the visitor's
  language (a path under ``/api/`` is answered by the API's URLconf, in its error
  shape);
- :func:`server_error`: an error no view answered: ``503`` when the database could not
  be reached, else ``500``; the site's page (``templates/500.html``) in the visitor's
  language with presales' address, or the API's error shape under ``/api/``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.contrib.auth.decorators import user_passes_test
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.defaults import page_not_found
from django_htmx.middleware import HtmxDetails

View = TypeVar("View", bound=Callable[..., HttpResponseBase])

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 60
"""What a 503 asks a client to wait before it tries again."""


class HtmxHttpRequest(HttpRequest):
    """Typing aid: a request that passed through django-htmx's middleware."""

    htmx: HtmxDetails


def is_staff(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Whether ``user`` may use the presales areas: active and staff."""
    return bool(user.is_active and getattr(user, "is_staff", False))


def staff_required(view: View) -> View:
    """``view`` for active staff users only; others are redirected to the login page.
    Every answer carries Django's :func:`~django.views.decorators.cache.never_cache`
    headers (``private``, ``no-store``): customer data and prices stay off shared
    caches and the browser's disk."""
    decorated: View = never_cache(user_passes_test(is_staff, login_url=settings.LOGIN_URL)(view))
    return decorated


def not_found(request: HttpRequest, exception: Exception) -> HttpResponseBase:
    """The 404 answer (``handler404``): Django's ``page_not_found`` with
    ``templates/404.html``."""
    return page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponseBase:
    """The answer to an error no view handled (``handler500``).

    A database that cannot be reached (:class:`~django.db.DatabaseError`) is an outage:
    ``503`` with ``Retry-After``; anything else is ``500``. Under ``/api/`` the answer is
    JSON in the API's error shape; elsewhere ``templates/500.html`` in the visitor's
    language with presales' address, rendered without reading who is signed in (that
    may be what failed). Should the page itself fail, a plain-text line with the address.
    """
    unavailable = isinstance(sys.exc_info()[1], DatabaseError)
    status = 503 if unavailable else 500
    response: HttpResponseBase
    if request.path_info.startswith("/api/"):
        detail = (
            gettext("The service is temporarily unavailable: try again in a minute.")
            if unavailable
            else gettext("An error on our side: try again later.")
        )
        code = "unavailable" if unavailable else "server_error"
        # the API's error shape (configurator.deployments.api_errors.ErrorOut); this
        # module sits below the apps and does not import theirs
        answer = {"field": None, "code": code, "detail": detail}
        response = JsonResponse(answer, status=status)
    else:
        context = {"unavailable": unavailable, "presales_email": settings.PRESALES_EMAIL}
        try:
            response = render(request, "500.html", context, status=status)
        except Exception:
            logger.exception("the error page could not be rendered")
            text = gettext("Please try again later, or write to us at %(email)s.") % {
                "email": settings.PRESALES_EMAIL
            }
            response = HttpResponse(text, status=status, content_type="text/plain; charset=utf-8")
    if unavailable:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
