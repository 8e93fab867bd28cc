"""The live-estimate request as a real browser's htmx sends it, captured and replayed.

:func:`capture_estimate` opens the configurator page in headless Chromium (Playwright,
Debian's ``chromium``; ``CHROMIUM_PATH`` names another), types the seed workload as a
customer does, and keeps the last ``POST /estimate/`` the page sent: its headers as they
went over the wire (cookies, the CSRF header from ``hx-headers``, htmx's ``HX-*``
headers, ``Origin``, ``Referer``, ``Accept-Encoding``) and its body in the encoding the
page chose. :meth:`CapturedRequest.raw` replays it with another number of users and the
``X-Forwarded-For`` address a reverse proxy appends for the client; nothing else
changes but the length.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TYPED = {"#id_model": "Qwen/Qwen3-32B-FP8", "#id_context_tokens": "8192", "#id_users": "500"}
"""What the customer types (the seed workload of the other page benchmarks)."""
HOP_HEADERS = frozenset({"host", "content-length", "connection"})
"""Headers the replay writes itself: the server's address, the new body's length, and
one request per connection."""


def chromium_path() -> str | None:
    """The Chromium binary, or None where it is not installed."""
    path = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    return path if Path(path).exists() else None


@dataclass(frozen=True)
class CapturedRequest:
    """One request as the browser sent it: path, headers in order (lower-case names),
    body."""

    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    @property
    def content_type(self) -> str:
        """The body's content type (``multipart/form-data; boundary=…`` or
        ``application/x-www-form-urlencoded``)."""
        return dict(self.headers).get("content-type", "")

    def body_with(self, users: int) -> bytes:
        """The body with ``users`` as the number of users, in the body's own encoding.

        Raises:
            ValueError: the body has no ``users`` field.
        """
        if self.content_type.startswith("multipart/form-data"):
            pattern = rb'(name="users"\r\n\r\n)[^\r]*(\r\n)'
        else:
            pattern = rb"((?:^|&)users=)[^&]*()"
        body, found = re.subn(pattern, rb"\g<1>%d\g<2>" % users, self.body, count=1)
        if not found:
            raise ValueError("the captured estimate request has no users field")
        return body

    def raw(self, port: int, *, users: int, client_address: str) -> bytes:
        """The HTTP/1.1 request to 127.0.0.1:``port`` with ``users`` users, as the proxy
        forwards it for ``client_address``."""
        body = self.body_with(users)
        lines = [f"POST {self.path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
        lines += [f"{name}: {value}" for name, value in self.headers if name not in HOP_HEADERS]
        lines += [
            f"Content-Length: {len(body)}",
            f"X-Forwarded-For: {client_address}",
            "Connection: close",
        ]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def capture_estimate(port: int, chromium: str) -> CapturedRequest:
    """The last live-estimate request the page at 127.0.0.1:``port`` sends while the
    :data:`TYPED` workload is typed in German.

    Raises:
        RuntimeError: the page sent no estimate request, or its answer was not 200.
    """
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(locale="de-DE").new_page()
            answers: list[Any] = []
            page.on("response", lambda answer: answers.append(answer))
            page.goto(f"http://127.0.0.1:{port}/")
            for selector, text in TYPED.items():
                page.locator(selector).fill("")
                page.locator(selector).press_sequentially(text)
            # The seed's 204 conversations on four cards: the answer to the last input.
            expect(page.locator("#figure-resident .value")).to_have_text("204", timeout=15_000)
            page.wait_for_load_state("networkidle")
            sent = []
            for answer in answers:
                request = answer.request
                if request.method == "POST" and request.url.endswith("/estimate/"):
                    if answer.status != 200:
                        raise RuntimeError(f"the estimate answered {answer.status}")
                    sent.append((request.url, request.all_headers(), request.post_data_buffer))
        finally:
            browser.close()
    if not sent:
        raise RuntimeError("the page sent no estimate request")
    url, headers, body = sent[-1]
    path = "/" + url.split("/", 3)[3]
    kept = tuple((name.lower(), value) for name, value in headers.items() if ":" not in name)
    return CapturedRequest(path, kept, body or b"")
