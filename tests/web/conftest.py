"""Fixtures of the Django feature tests."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from django.test import Client
from pytest_django import Settings

from configurator.celery import app
from tests.quote_factories import make_presales
from tests.web.ports import free_port


@pytest.fixture
def presales(client: Client) -> Client:
    """A signed-in presales user whose browser asks for English pages."""
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    client.force_login(make_presales())
    return client


@dataclass
class Refusing:
    """An SMTP handler that refuses the first ``refusals`` messages, then accepts, each
    after ``delay_s`` seconds."""

    refusals: int
    delay_s: float = 0.0
    accepted: list[tuple[list[str], bytes]] = field(default_factory=list)
    refused: int = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        await asyncio.sleep(self.delay_s)
        if self.refused < self.refusals:
            self.refused += 1
            return "554 5.7.1 Message refused"
        self.accepted.append((list(envelope.rcpt_tos), bytes(envelope.content)))
        return "250 OK"


@pytest.fixture
def smtp(settings: Any, request: Any) -> Iterator[Refusing]:
    """A real SMTP server on 127.0.0.1 that the mail settings point at; parametrize
    indirectly with the number of messages it refuses first."""
    handler = Refusing(refusals=getattr(request, "param", 0))
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.PRESALES_EMAIL = "presales@example.com"
    settings.HF_HUB_OFFLINE = True
    try:
        yield handler
    finally:
        controller.stop()


def broker_reconnect() -> None:
    """Drop the Celery app's pooled broker connections and its result store client, so
    the next publish connects to the URLs now configured."""
    app.close()
    app.amqp._producer_pool = None  # holds the connection to the earlier URL
    app._backend_cache = None
    app._local = threading.local()


@pytest.fixture
def dead_broker(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Broker and result store (one Redis, as in production) on a port where nothing
    listens: every publish fails."""
    # Celery reads the variable before its configuration: the shared broker of CI
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)
    conf = app.conf
    previous = (conf.broker_url, conf.result_backend, conf.task_always_eager)
    conf.broker_url = conf.result_backend = f"redis://127.0.0.1:{free_port()}/0"
    conf.task_always_eager = False
    broker_reconnect()
    yield
    conf.broker_url, conf.result_backend, conf.task_always_eager = previous
    broker_reconnect()


@pytest.fixture(autouse=True)
def _no_pdf_prerender(settings: Settings) -> None:
    """Quote changes do not enqueue PDF renderings (where a broker is configured they
    would pile up for the real worker of test_celery_worker.py); the tests of that job
    switch it on with eager tasks."""
    settings.QUOTE_PDF_PRERENDER = False


@pytest.fixture(autouse=True)
def _generous_rate_limits(settings: Settings) -> None:
    """Per-client rate limits far above what any test sends from its one address.

    Tests of the limits themselves set lower ones (tests/web/test_rate_limits.py).
    """
    settings.RATE_LIMITS = {"estimate": "100000/m", "api": "100000/m"}
