"""What every view shares: the request type django-htmx hands them and the staff check.

- :class:`HtmxHttpRequest`: a request that passed through django-htmx's middleware
  (``request.htmx`` is its :class:`~django_htmx.middleware.HtmxDetails`), for typing;
- :func:`staff_required`: the presales areas (queue, quote editor, verification,
  bundle download) admit active staff users only; anyone else is sent to the login
  page (``settings.LOGIN_URL``);
- :func:`not_found`: the site's 404 page (``templates/404.html``) in the visitor's
  language (a path under ``/api/`` is answered by the API's URLconf, in its error
  shape).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.contrib.auth.decorators import user_passes_test
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest, HttpResponseBase
from django.views.defaults import page_not_found
from django_htmx.middleware import HtmxDetails

View = TypeVar("View", bound=Callable[..., HttpResponseBase])


class HtmxHttpRequest(HttpRequest):
    """Typing aid: a request that passed through django-htmx's middleware."""

    htmx: HtmxDetails


def is_staff(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Whether ``user`` may use the presales areas: active and staff."""
    return bool(user.is_active and getattr(user, "is_staff", False))


def staff_required(view: View) -> View:
    """``view`` for active staff users only; others are redirected to the login page."""
    decorated: View = user_passes_test(is_staff, login_url=settings.LOGIN_URL)(view)
    return decorated


def not_found(request: HttpRequest, exception: Exception) -> HttpResponseBase:
    """The 404 answer (``handler404``): Django's ``page_not_found`` with
    ``templates/404.html``."""
    return page_not_found(request, exception)
