"""The production setup of ``docs/operations.md`` for page benchmarks: PostgreSQL, Redis
as the cache (rate limits, remembered lookups) and the Celery broker, a Celery worker,
rate limits on, and the site behind a reverse proxy on 127.0.0.1
(``DJANGO_TRUSTED_PROXIES``), so each benchmark client is told apart by the
``X-Forwarded-For`` address the proxy would append.

The services are the machine's own: ``BENCH_DATABASE_URL`` names a PostgreSQL database
the benchmark drops and creates anew (default ``configurator_bench`` on 127.0.0.1:5432),
``BENCH_REDIS_URL`` a Redis database it empties at the start (default database 15 on
127.0.0.1:6379). Point both at databases of your own on a shared server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from benchmarks.server import process_group

ROOT = Path(__file__).resolve().parent.parent
DATABASE_URL = "postgres://postgres@127.0.0.1:5432/configurator_bench"
REDIS_URL = "redis://127.0.0.1:6379/15"
PROXY = "127.0.0.1"
"""The reverse proxy's address: every benchmark request arrives from it."""


def _database_anew(url: str) -> None:
    """Drop and create the PostgreSQL database of ``url`` (its server's ``postgres``
    database takes the commands)."""
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl().replace("postgres://", "postgresql://", 1)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _redis_emptied(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


@contextmanager
def production_setup() -> Iterator[dict[str, str]]:
    """Prepare the services (a new database, migrated; static files collected; the
    Redis database emptied), start a Celery worker, and yield the environment that the
    web server and ``manage.py`` commands run with; the worker stops afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-production-"))
    database = os.environ.get("BENCH_DATABASE_URL", DATABASE_URL)
    redis_url = os.environ.get("BENCH_REDIS_URL", REDIS_URL)
    _database_anew(database)
    _redis_emptied(redis_url)
    env = {
        **os.environ,
        "DJANGO_DEBUG": "false",
        "HF_HUB_OFFLINE": "true",
        "DATABASE_URL": database,
        "REDIS_CACHE_URL": redis_url,
        "CELERY_BROKER_URL": redis_url,
        "RATE_LIMITS_ENABLED": "true",
        "DJANGO_TRUSTED_PROXIES": PROXY,
        "DJANGO_STATIC_ROOT": str(tmp / "static"),
    }
    env.setdefault("DJANGO_SECRET_KEY", "benchmark-only-key-not-for-production-use-0123456789")
    quiet = {"cwd": ROOT, "env": env, "check": True, "stdout": subprocess.DEVNULL}
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], **quiet)  # type: ignore[call-overload]
    subprocess.run([*manage, "collectstatic", "--noinput", "-v0"], **quiet)  # type: ignore[call-overload]
    argv = [sys.executable, "-m", "celery", "-A", "configurator", "worker", "--concurrency", "1"]
    argv += ["--loglevel", "warning", "--without-heartbeat", "--without-gossip", "--without-mingle"]
    with process_group(argv, env) as worker:
        time.sleep(1)
        if worker.poll() is not None:
            raise RuntimeError("the Celery worker exited at start-up")
        yield env


def server_settings(env: dict[str, str]) -> dict[str, str]:
    """The settings of :func:`production_setup`'s environment that the web server
    takes (:func:`benchmarks.server.gunicorn`)."""
    names = (
        "DATABASE_URL",
        "REDIS_CACHE_URL",
        "CELERY_BROKER_URL",
        "RATE_LIMITS_ENABLED",
        "DJANGO_TRUSTED_PROXIES",
        "DJANGO_STATIC_ROOT",
    )
    return {name: env[name] for name in names}
