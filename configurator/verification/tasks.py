"""The verification job: ``verify_quote(quote_id)``, and starting it
(:func:`verification_start`).

Reliability: the message is acknowledged only after the task finished (``acks_late``)
and re-queued when the worker dies (``reject_on_worker_lost``); database outages are
retried with exponential backoff; a hard time limit stops a stuck run. The service
replaces the report atomically, so a redelivered or repeated job leaves one report.

A worker that is killed outright leaves its report running; when a worker starts it
publishes such jobs again once they started longer ago than the hard time limit
(``VERIFICATION_STALE_SECONDS``, default 60), instead of waiting for the broker's
visibility timeout.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from celery.signals import worker_ready
from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from configurator.celery import app
from configurator.env import env_str
from configurator.quotes.models import Quote
from configurator.verification import services
from configurator.verification.models import VerificationReport, VerificationStatus

TRANSIENT_ERRORS = (OperationalError, InterfaceError, ConnectionError, TimeoutError)
TIME_LIMIT_SECONDS = 60

log = logging.getLogger(__name__)


def stale_after_seconds() -> float:
    """``VERIFICATION_STALE_SECONDS``: a running report older than this is stale (at
    least 1 s; default the task's hard time limit, after which no run can be alive)."""
    raw = env_str("VERIFICATION_STALE_SECONDS") or str(TIME_LIMIT_SECONDS)
    try:
        return max(1.0, float(raw))
    except ValueError:
        return float(TIME_LIMIT_SECONDS)


@worker_ready.connect
def requeue_stale_reports(**_kwargs: object) -> None:
    """When a worker starts, publish again the jobs a dead worker left running."""
    try:
        quote_ids = verification_requeue_stale(older_than_s=stale_after_seconds())
    except (OperationalError, InterfaceError) as exc:  # no database yet: nothing to do
        log.warning("stale verification reports not checked: %s", exc)
        return
    if quote_ids:
        log.warning("verification of quotes %s published again after a worker died", quote_ids)


def _pause_seconds() -> float:
    """``VERIFICATION_TEST_PAUSE_SECONDS``: hold a running job this long (0 by default).

    Only the redelivery test sets it, to kill a worker while the job is running.
    """
    raw = env_str("VERIFICATION_TEST_PAUSE_SECONDS") or "0"
    try:
        return max(0.0, min(float(raw), 60.0))
    except ValueError:
        return 0.0


@app.task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=5,
    soft_time_limit=TIME_LIMIT_SECONDS - 10,
    time_limit=TIME_LIMIT_SECONDS,
)
def verify_quote(self, quote_id: int) -> str:  # type: ignore[no-untyped-def]
    """Verify quote ``quote_id`` against the benchmark records; returns the status."""
    services.verification_mark_running(quote_id=quote_id)
    pause = _pause_seconds()
    if pause:
        time.sleep(pause)
    try:
        report = services.verification_run(quote_id=quote_id)
    except TRANSIENT_ERRORS:
        if self.request.retries >= (self.max_retries or 0):
            services.verification_fail(quote_id=quote_id, error="the database was unreachable")
        raise
    except Exception as exc:
        # A bug or bad data will not heal on retry: the report says so, the job ends.
        services.verification_fail(quote_id=quote_id, error=f"{type(exc).__name__}: {exc}")
        return "failed"
    return str(report.status)


def verification_start(*, quote: Quote) -> VerificationReport:
    """Mark the quote's report pending and enqueue the job when the transaction commits.

    A quote has one report; starting again resets it (the job replaces its checks).
    When the broker cannot be reached (publishing gives up within a few seconds, see
    ``CELERY_BROKER_CONNECTION_TIMEOUT``), the report is left failed with a sentence
    saying so, never pending without a job; starting again retries.

    Returns:
        The report as it stands after the enqueue attempt.
    """
    with transaction.atomic():
        report, _ = VerificationReport.objects.select_for_update().get_or_create(quote=quote)
        report.status = VerificationStatus.PENDING
        report.error = ""
        report.save(update_fields=["status", "error"])
        quote_id = quote.pk
        error = gettext(
            "The task queue could not be reached, so the verification did not start. "
            "Start it again in a minute; if it keeps failing, the Celery broker is down."
        )
        transaction.on_commit(lambda: verification_enqueue(quote_id=quote_id, error=error))
    report.refresh_from_db()
    return report


def verification_enqueue(*, quote_id: int, error: str) -> bool:
    """Publish the job of quote ``quote_id``; on a broker failure mark the report failed
    with ``error`` (and log) instead of raising. True when the job was published."""
    try:
        verify_quote.delay(quote_id)
    except Exception as exc:  # kombu's OperationalError, the result store's RuntimeError
        # Publishing is all that happens here: any failure means the job is not queued.
        log.warning("verification of quote %s not queued: %s", quote_id, exc)
        services.verification_fail(quote_id=quote_id, error=error)
        return False
    return True


def verification_requeue_stale(*, older_than_s: float) -> list[int]:
    """Re-enqueue reports left ``running`` for longer than ``older_than_s`` seconds.

    A worker killed mid-job (SIGKILL, out of memory, a lost machine) leaves its report
    running; the broker would redeliver the message only after its visibility timeout.
    Called when a worker starts: a job that started longer ago than the task's hard
    time limit cannot still be running anywhere. Such reports go back to pending and
    their job is published again; the job replaces the report atomically, so a later
    redelivery of the old message still leaves one report.

    Returns:
        The ids of the quotes whose job was published again.
    """
    cutoff = timezone.now() - timedelta(seconds=older_than_s)
    stale = VerificationReport.objects.filter(
        status=VerificationStatus.RUNNING, started_at__lt=cutoff
    )
    quote_ids = list(stale.values_list("quote_id", flat=True))
    requeued = []
    for quote_id in quote_ids:
        VerificationReport.objects.filter(quote_id=quote_id).update(
            status=VerificationStatus.PENDING
        )
        error = gettext(
            "The worker running this verification stopped, and the task queue could not be "
            "reached to start it again: start it again in a minute."
        )
        if verification_enqueue(quote_id=quote_id, error=error):
            requeued.append(quote_id)
    return requeued
