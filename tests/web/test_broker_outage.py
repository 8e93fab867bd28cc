"""Broker down: starting a verification says so at once and leaves the report failed.

The real Celery app publishes to Redis on a loopback port where nothing listens
(``CELERY_BROKER_CONNECTION_TIMEOUT`` and ``CELERY_TASK_PUBLISH_RETRY_POLICY`` bound
the attempt). The report is never left pending without a job; starting again retries.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from configurator.celery import app
from configurator.verification.models import VerificationReport
from configurator.verification.tasks import requeue_stale_reports
from tests.quote_factories import make_quote
from tests.web.ports import free_port

pytestmark = pytest.mark.django_db(transaction=True)


def reconnect() -> None:
    """Drop the app's pooled broker connections and its result store client, so the
    next publish connects to the URLs now configured."""
    app.close()
    app._backend_cache = None
    app._local = threading.local()


@pytest.fixture
def dead_broker() -> Iterator[None]:
    """Broker and result store (one Redis, as in production) on a dead port."""
    conf = app.conf
    previous = (conf.broker_url, conf.result_backend, conf.task_always_eager)
    conf.broker_url = conf.result_backend = f"redis://127.0.0.1:{free_port()}/0"
    conf.task_always_eager = False
    reconnect()
    yield
    conf.broker_url, conf.result_backend, conf.task_always_eager = previous
    reconnect()


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
