"""The live estimate in one process, for :mod:`benchmarks.bench_instructions`.

``python -m benchmarks.estimate_instructions N`` (under callgrind, started with its
instrumentation off) loads the application as a web worker does (``configurator.wsgi``),
reads the page's form from ``GET /``, posts 150 estimates to warm its stores, turns the
instrumentation on (``callgrind_control -i on``), posts ``N`` estimates exactly as the
page sends them (:mod:`benchmarks.page_form`: the whole form, url-encoded, with the htmx
and CSRF headers; a new number of users each, 10,100 on), and turns it off again. The
environment names the settings (a throw-away SQLite database, no rate limits).

``python -m benchmarks.estimate_instructions N CAPTURED`` posts instead the browser's
request saved in the JSON file ``CAPTURED`` (:class:`benchmarks.browser_request.CapturedRequest`),
each from 127.0.0.1 as the trusted proxy with the client's ``X-Forwarded-For`` address, a
new client every :data:`PER_CLIENT` requests (under the 120-a-minute limit): the
production setup's request, in the production setup's environment.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

TYPED = {"model": "Qwen/Qwen3-32B-FP8", "context_tokens": "8192"}
TOKEN = "b" * 32
WARM_UP = 150
PER_CLIENT = 100


def _call(app: Any, method: str, path: str, body: bytes, headers: dict[str, str]) -> bytes:
    """One request through the WSGI application; its body (a status other than 200 is
    an error)."""
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1",
        "HTTP_ACCEPT_LANGUAGE": "de",
        "HTTP_COOKIE": f"csrftoken={TOKEN}",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.url_scheme": "http",
        **headers,
    }
    status: list[str] = []
    out = b"".join(app(environ, lambda line, _headers, _exc=None: status.append(line)))
    if not status[0].startswith("200"):
        raise RuntimeError(f"{method} {path} answered {status[0]}")
    return out


def _instrumentation(state: str) -> None:
    subprocess.run(
        ["callgrind_control", "-i", state, str(os.getpid())], check=True, stdout=subprocess.DEVNULL
    )


def _page_post(app: Any) -> Callable[[int], bytes]:
    """A live estimate with ``users`` as the page's form sends it (:mod:`benchmarks.page_form`)."""
    from benchmarks.page_form import form_controls, urlencoded_body

    controls = form_controls(_call(app, "GET", "/", b"", {}).decode())

    def post(users: int) -> bytes:
        body, content_type = urlencoded_body(controls, {**TYPED, "users": str(users)})
        headers = {
            "CONTENT_TYPE": content_type,
            "HTTP_HX_REQUEST": "true",
            "HTTP_X_CSRFTOKEN": TOKEN,
        }
        return _call(app, "POST", "/estimate/", body, headers)

    return post


def _captured_post(app: Any, captured_file: str) -> Callable[[int], bytes]:
    """A live estimate with ``users`` as the browser sent it, through the proxy."""
    from benchmarks.browser_request import CapturedRequest

    saved = json.loads(Path(captured_file).read_text(encoding="utf-8"))
    captured = CapturedRequest(
        saved["path"], tuple((k, v) for k, v in saved["headers"]), saved["body"].encode("latin-1")
    )
    headers = {
        (
            "CONTENT_TYPE" if name == "content-type" else "HTTP_" + name.upper().replace("-", "_")
        ): value
        for name, value in captured.headers
        if name != "content-length"
    }
    headers["REMOTE_ADDR"] = "127.0.0.1"

    def post(users: int) -> bytes:
        client = f"198.18.{users // PER_CLIENT // 256 % 256}.{users // PER_CLIENT % 256}"
        forwarded = {**headers, "HTTP_X_FORWARDED_FOR": client}
        return _call(app, "POST", captured.path, captured.body_with(users), forwarded)

    return post


def main(count: int, captured_file: str | None) -> None:
    from configurator.wsgi import application

    post = (
        _page_post(application)
        if captured_file is None
        else _captured_post(application, captured_file)
    )
    for users in range(5_000, 5_000 + WARM_UP):
        post(users)
    _instrumentation("on")
    for users in range(10_100, 10_100 + count):
        post(users)
    _instrumentation("off")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
