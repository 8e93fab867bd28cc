"""Ask the configurator again while it looks a model up, as the page's poll does.

A web request never waits for the Hub (``configurator.modelhub.background``): the first
estimate of an uncached model says "looking up" and polls once a second. These helpers
repeat the request every 50 ms until the answer is there, for at most ``timeout_s``.
"""

from __future__ import annotations

import time
from typing import Any

from django.http import HttpResponse
from django.test import Client

PENDING_MARK = 'class="notice lookup-pending"'


def is_pending(response: HttpResponse) -> bool:
    """Whether ``response`` is the "looking up" estimate."""
    return PENDING_MARK in response.content.decode()


def post_until_answered(
    client: Client, path: str, data: dict[str, Any], *, timeout_s: float = 15.0, **kwargs: Any
) -> HttpResponse:
    """POST ``data`` to ``path`` until the answer is no longer "looking up"."""
    deadline = time.monotonic() + timeout_s
    response: HttpResponse = client.post(path, data, **kwargs)
    while is_pending(response):
        assert time.monotonic() < deadline, f"{path} still looking up after {timeout_s} s"
        time.sleep(0.05)
        response = client.post(path, data, **kwargs)
    return response
