"""The application served as in production for page benchmarks (``docs/operations.md``):
gunicorn on 127.0.0.1 with one sync worker per CPU core, static files from WhiteNoise."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Server:
    """A running server: its port, a CSRF token it issued, its worker processes, and
    the gunicorn master's process id (its children are the workers)."""

    port: int
    csrf_token: str
    workers: int
    pid: int = 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_until_up(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the benchmark server exited at start-up")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the benchmark server did not start within {timeout_s:.0f} s")


def get(port: int, path: str) -> tuple[bytes, dict[str, str]]:
    """``GET path`` in German; the body and the lower-cased headers."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers={"Accept-Language": "de"})
    response = conn.getresponse()
    body = response.read()
    headers = {k.lower(): v for k, v in response.getheaders()}
    conn.close()
    return body, headers


@contextmanager
def gunicorn(**settings_env: str) -> Iterator[Server]:
    """Start the server, yield it with a CSRF token from the page, stop it afterwards.

    ``settings_env`` overrides the environment (``docs/operations.md``). Per-client rate
    limits are off unless it turns them on: every benchmark client is 127.0.0.1.
    """
    port = _free_port()
    env = {**os.environ, "DJANGO_DEBUG": "false", "HF_HUB_OFFLINE": "true"}
    env["RATE_LIMITS_ENABLED"] = "false"
    env.update(settings_env)
    env.setdefault("DJANGO_SECRET_KEY", "benchmark-only-key-not-for-production-use-0123456789")
    workers = os.cpu_count() or 1
    argv = [sys.executable, "-m", "gunicorn", "configurator.wsgi:application"]
    argv += ["--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--log-level", "warning"]
    with process_group(argv, env) as proc:
        _wait_until_up(port, proc)
        _, headers = get(port, "/")
        token = re.search(r"csrftoken=([^;]+)", headers.get("set-cookie", ""))
        if not token:
            raise RuntimeError("the page set no CSRF cookie")
        yield Server(port, token.group(1), workers, proc.pid)


@contextmanager
def process_group(argv: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv`` in the checkout, quiet, in a process group of its own; stop the
    group (the process and the workers it forked) afterwards."""
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
