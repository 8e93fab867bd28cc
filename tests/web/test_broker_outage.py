"""Broker down or hung: what was saved answers as saved, and says what follows.

The real Celery app publishes to Redis on a loopback port where nothing listens
(``dead_broker``), or to a Redis server of the test's own that is stopped with SIGSTOP
(``hung_broker``: connections are accepted, nothing answers; the publish gives up after
``BROKER_TIMEOUT_SECONDS`` and is not retried). A verification is never left pending
without a job; starting again retries. A quote change is saved, and says that its PDF
follows.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from configurator.celery import app
from configurator.inquiries.models import Inquiry, InquiryMail
from configurator.quotes.models import Quote
from configurator.verification.models import VerificationReport
from configurator.verification.tasks import requeue_stale_reports
from tests.quote_factories import make_inquiry, make_presales, make_quote
from tests.seed_form import seed_form
from tests.web.conftest import broker_reconnect
from tests.web.faults import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def hung_broker(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Broker and result store on a Redis of the test's own, hung (SIGSTOP) after the
    app has connected to it once."""
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)  # read before the settings
    server = RedisServer()
    conf = app.conf
    previous = (conf.broker_url, conf.result_backend, conf.task_always_eager)
    conf.broker_url = conf.result_backend = server.url(0)
    conf.task_always_eager = False
    broker_reconnect()
    with app.connection_for_write() as connection:
        connection.ensure_connection(max_retries=1)
    server.pause()
    yield
    server.stop()
    conf.broker_url, conf.result_backend, conf.task_always_eager = previous
    broker_reconnect()


@pytest.fixture
def staff(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("presales", password="pw", is_staff=True)


def test_start_with_the_broker_down_shows_why_and_leaves_the_report_failed(
    client: Any, staff: Any, dead_broker: None
) -> None:
    quote = make_quote()
    client.force_login(staff)
    response = client.post(
        reverse("verification:start", args=[quote.pk]),
        headers={"HX-Request": "true", "Accept-Language": "en"},
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert "The task queue could not be reached" in body
    report = VerificationReport.objects.get(quote=quote)
    assert report.status == "failed" and report.is_done
    # The start button is offered again (templates/verification/report.html).
    assert reverse("verification:start", args=[quote.pk]) in body
    page = client.get(reverse("verification:report", args=[quote.pk]))
    assert 'hx-trigger="load delay:1s"' not in page.content.decode()  # no endless polling


def test_a_worker_start_runs_again_a_job_a_dead_worker_left_running(eager_tasks: None) -> None:
    quote = make_quote()
    # A worker was killed two minutes into the job (tasks.TIME_LIMIT_SECONDS is 60).
    VerificationReport.objects.create(
        quote=quote, status="running", started_at=timezone.now() - timedelta(minutes=2)
    )
    fresh = make_quote()
    VerificationReport.objects.create(quote=fresh, status="running", started_at=timezone.now())
    requeue_stale_reports()
    # The seed example (docs/sizing.md) verifies against the bundled cases: a finished status.
    assert VerificationReport.objects.get(quote=quote).is_done
    assert VerificationReport.objects.get(quote=quote).runs == 1
    # A job that started within the time limit may still be running: left alone.
    assert VerificationReport.objects.get(quote=fresh).status == "running"


@pytest.mark.parametrize("broker", ["dead_broker", "hung_broker"])
def test_a_quote_change_is_saved_and_says_its_pdf_follows(
    request: Any, broker: str, settings: Any
) -> None:
    settings.QUOTE_PDF_PRERENDER = True  # as in production with a broker
    request.getfixturevalue(broker)
    client = Client(headers={"Accept-Language": "en"})
    client.force_login(make_presales())
    inquiry = make_inquiry()
    created = client.post(reverse("quotes:create", args=[inquiry.pk]), follow=True)
    assert created.status_code == 200
    quote = Quote.objects.get()
    assert "Its PDF follows" in created.content.decode()
    changed = client.post(
        reverse("quotes:settings", args=[quote.pk]),
        {"discount_percent": "10", "language": "en", "notes": ""},
        follow=True,
    )
    assert changed.status_code == 200 and "Its PDF follows" in changed.content.decode()
    issued = client.post(reverse("quotes:issue", args=[quote.pk]), follow=True)
    assert issued.status_code == 200 and "Its PDF follows" in issued.content.decode()
    quote.refresh_from_db()
    assert quote.discount_percent == 10 and quote.number
    # The download renders the PDF the worker did not get.
    pdf = client.get(reverse("quotes:pdf", args=[quote.pk]))
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")


def test_a_quote_request_with_the_broker_hung_is_stored_with_its_mails(
    client: Client, hung_broker: None, settings: Any
) -> None:
    settings.HF_HUB_OFFLINE = True
    contact = {"name": "Dana", "company": "B GmbH", "email": "d@example.com", "consent": "on"}
    response = client.post("/quote/", {**seed_form(), **contact})
    assert response.status_code == 303
    inquiry = Inquiry.objects.get()
    assert inquiry.mail_error.startswith("not queued: Timeout")
    # Both mails wait in the outbox, due to the next sweep.
    assert InquiryMail.objects.filter(inquiry=inquiry, sent_at=None).count() == 2


def test_start_with_the_broker_hung_shows_why(client: Any, staff: Any, hung_broker: None) -> None:
    quote = make_quote()
    client.force_login(staff)
    response = client.post(
        reverse("verification:start", args=[quote.pk]),
        headers={"HX-Request": "true", "Accept-Language": "en"},
    )
    assert response.status_code == 200
    assert "The task queue could not be reached" in response.content.decode()
    assert VerificationReport.objects.get(quote=quote).status == "failed"
