"""A real Celery worker on Redis runs the verification job against PostgreSQL, and its
beat sends the inquiry mails a broker outage left in the outbox.

Needs ``CELERY_BROKER_URL`` (Redis) and a PostgreSQL ``DATABASE_URL``; skipped elsewhere,
a failure under ``CI=true``. The worker is a subprocess pointed at the test database
that pytest-django created, so the tests use committed transactions.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from configurator.inquiries.models import Inquiry, InquiryMail
from configurator.planning.services import plan_stored
from configurator.quotes.models import Quote
from configurator.verification.models import VerificationReport
from configurator.verification.services import benchmarks_load_initial, plan_checks
from configurator.verification.tasks import verify_quote
from tests.conftest import ci_requires
from tests.quote_factories import make_quote
from tests.seed_form import seed_form

ROOT = Path(__file__).resolve().parents[2]
CELERY = ROOT / ".venv" / "bin" / "celery"
INPUTS = {
    "model_id": "meta-llama/Llama-3.1-8B-Instruct",
    "context_tokens": 8192,
    "users": 500,
    "gpu_slug": "h100-sxm",
    "gpus_per_node": 4,
    "kv_dtype": "auto",
}

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker_env(broker_url):
    if connection.vendor != "postgresql":
        ci_requires("a PostgreSQL DATABASE_URL")
    s = connection.settings_dict
    db_url = f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"
    env = {**os.environ, "DATABASE_URL": db_url, "CELERY_BROKER_URL": broker_url}
    env["CELERY_VISIBILITY_TIMEOUT_SECONDS"] = "3"
    return env


def start_worker(
    env: dict[str, str], *, beat_schedule: str = "", **extra: str
) -> subprocess.Popen[bytes]:
    """A worker subprocess; with ``beat_schedule`` (a file) with its embedded beat, as
    ``make worker`` starts it."""
    beat = ["--beat", "--schedule", beat_schedule] if beat_schedule else []
    return subprocess.Popen(
        [
            str(CELERY),
            "-A",
            "configurator",
            "worker",
            "--pool=solo",
            "--loglevel=warning",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            *beat,
        ],
        cwd=ROOT,
        env={**env, **extra},
        stdout=subprocess.DEVNULL,
        stderr=sys.stderr,
        start_new_session=True,
    )


def stop(worker: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, sig)
        worker.wait(timeout=30)


def wait_for(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def kill_worker_mid_job(env: dict[str, str], quote: Quote) -> None:
    """Start a worker that holds the job 20 s, and SIGKILL it once the job runs: the
    message stays unacknowledged and the report says running."""
    worker = start_worker(env, VERIFICATION_TEST_PAUSE_SECONDS="20")
    try:
        verify_quote.delay(quote.pk)
        running = wait_for(
            lambda: VerificationReport.objects.filter(quote=quote, status="running").exists(),
            60,
        )
        assert running, "the first worker never picked up the job"
    finally:
        stop(worker, signal.SIGKILL)


def next_worker_verifies(env: dict[str, str], quote: Quote, **extra: str) -> bool:
    """Start another worker; whether the quote's report ends verified within 90 s."""
    worker = start_worker(env, **extra)
    try:
        return wait_for(
            lambda: VerificationReport.objects.filter(quote=quote, status="verified").exists(),
            90,
        )
    finally:
        stop(worker)


def test_worker_runs_the_job_and_returns_its_result(worker_env):
    quote = make_quote(INPUTS)
    worker = start_worker(worker_env)
    try:
        result = verify_quote.delay(quote.pk)
        # Llama-3.1-8B on H100 agrees with cases 017-030 (tests/web/test_verification.py).
        assert result.get(timeout=60) == "verified"
    finally:
        stop(worker)
    report = VerificationReport.objects.get(quote=quote)
    assert report.status == "verified"
    assert report.runs == 1


def test_killed_worker_the_job_is_redelivered_and_one_report_exists(worker_env):
    quote = make_quote(INPUTS)
    benchmarks_load_initial()
    expected_checks = len(plan_checks(plan_stored(INPUTS)))  # one run's checks
    kill_worker_mid_job(worker_env, quote)
    # The broker hands the unacknowledged message out again once its visibility timeout
    # has passed; a worker that starts sooner scans too early and scans again only after
    # kombu's restore throttle, so the next worker starts after the timeout.
    time.sleep(float(worker_env["CELERY_VISIBILITY_TIMEOUT_SECONDS"]) + 1)
    done = next_worker_verifies(worker_env, quote)
    assert done, "the job was not redelivered to the second worker"
    assert VerificationReport.objects.filter(quote=quote).count() == 1
    report = VerificationReport.objects.get(quote=quote)
    assert report.checks.count() == expected_checks


def test_killed_worker_the_next_worker_runs_the_job_at_start(worker_env):
    # The broker would redeliver only after its visibility timeout (an hour here); the
    # next worker publishes the stale job again when it starts (verification.tasks).
    env = {**worker_env, "CELERY_VISIBILITY_TIMEOUT_SECONDS": "3600"}
    quote = make_quote(INPUTS)
    benchmarks_load_initial()
    kill_worker_mid_job(env, quote)
    # The next worker counts a report as stale once it has run 1 s; a worker that starts
    # sooner than that after the kill would rightly leave it alone, so wait until then.
    started = VerificationReport.objects.get(quote=quote).started_at
    assert started is not None
    time.sleep(max(0.0, (started + timedelta(seconds=1.5) - timezone.now()).total_seconds()))
    done = next_worker_verifies(env, quote, VERIFICATION_STALE_SECONDS="1")
    status = VerificationReport.objects.get(quote=quote).status
    assert done, f"the stale job was not run again when the next worker started ({status})"
    report = VerificationReport.objects.get(quote=quote)
    assert report.runs == 1


def test_the_workers_beat_sends_the_mails_a_broker_outage_left_in_the_outbox(
    worker_env, smtp, dead_broker, client, tmp_path
) -> None:
    # The request is made while the broker is down (this process publishes to a dead
    # port): the inquiry and its two mail rows are stored, nothing is queued.
    contact = {"name": "Dana", "company": "B GmbH", "email": "d@example.com", "consent": "on"}
    assert client.post("/quote/", {**seed_form(), **contact}).status_code == 303
    inquiry = Inquiry.objects.get()
    assert inquiry.mail_error.startswith("not queued") and smtp.accepted == []
    # The broker is back: a worker started as `make worker` starts it, with its beat.
    mail_env = {
        "DJANGO_EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(settings.EMAIL_PORT),
        "PRESALES_EMAIL": "presales@example.com",
    }
    worker = start_worker(
        worker_env, beat_schedule=str(tmp_path / "celerybeat-schedule"), **mail_env
    )
    try:
        sent = wait_for(lambda: not InquiryMail.objects.filter(sent_at=None).exists(), 90)
        assert sent, "the sweep never sent the mails"
        time.sleep(3)  # any second send would arrive meanwhile
    finally:
        stop(worker)
    assert sorted(r for rcpt, _ in smtp.accepted for r in rcpt) == [
        "d@example.com",
        "presales@example.com",
    ]
    inquiry.refresh_from_db()
    assert inquiry.mail_error == "" and inquiry.customer_mailed_at is not None
