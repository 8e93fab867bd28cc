"""The verification job: ``verify_quote(quote_id)``.

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

from celery.signals import worker_ready
from django.db import InterfaceError, OperationalError

from configurator.celery import app
from configurator.env import env_str
from configurator.verification import services

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
        quote_ids = services.verification_requeue_stale(older_than_s=stale_after_seconds())
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
