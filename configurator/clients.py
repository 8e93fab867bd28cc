"""Who a request comes from, and per-client rate limits that never take the site down.

The client address is ``REMOTE_ADDR``, unless that is one of ``settings.TRUSTED_PROXIES``:
then it is the last address in ``X-Forwarded-For`` that is not a trusted proxy (each
proxy appends the address it saw, so the entries left of the first untrusted one could
be forged by the client).

Rate limits count in Django's cache (``django-ratelimit``, fixed windows). When the
cache cannot be reached, a limit fails open: the request is served and the outage is
logged, because refusing every customer is worse than admitting a burst.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import is_ratelimited

logger = logging.getLogger(__name__)

T = TypeVar("T")


def _is_trusted(address: str) -> bool:
    """Whether ``address`` is one of ``TRUSTED_PROXIES`` (addresses or CIDR networks)."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    for entry in settings.TRUSTED_PROXIES:
        try:
            if ip in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def client_address_of(request: HttpRequest) -> str:
    """The address of the client that sent ``request`` (see the module docstring).

    Returns ``REMOTE_ADDR`` (``""`` when absent) unless it is a trusted proxy.
    """
    remote = str(request.META.get("REMOTE_ADDR", "") or "")
    if not settings.TRUSTED_PROXIES or not _is_trusted(remote):
        return remote
    forwarded = str(request.META.get("HTTP_X_FORWARDED_FOR", "") or "")
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _is_trusted(hop):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:
                return remote  # a malformed entry: the proxy's own address is all we know
    return remote


def fail_open(what: str, default: T, operation: Callable[[], T]) -> T:
    """``operation()``, or ``default`` with a logged warning when the cache fails.

    Any exception of the cache client (a refused connection, a timeout) counts: the
    request goes on without the cache.
    """
    try:
        return operation()
    except Exception as exc:
        logger.warning("%s: cache unavailable, going on without it (%s)", what, exc)
        return default


def rate_limited(request: HttpRequest, group: str, *, rate: str | None = None) -> bool:
    """Count ``request`` against its client's limit in ``group``; True when over it.

    Args:
        request: the request; its client is :func:`client_address_of`.
        group: a key of ``settings.RATE_LIMITS`` (``estimate``, ``api``) unless ``rate``
            is given.
        rate: ``"N/s|m|h|d"``, overriding the setting.

    Fails open when the cache is down (:func:`fail_open`).
    """
    limit = rate or settings.RATE_LIMITS[group]

    def key(_group: str, req: Any) -> str:
        return client_address_of(req)

    return fail_open(
        f"rate limit {group}",
        False,
        lambda: bool(is_ratelimited(request, group=group, key=key, rate=limit, increment=True)),
    )
