"""Mail about an inquiry: ``send_inquiry_mail(mail_id)`` sends one outbox row, and
``send_due_mails()``, run every minute by the worker's beat, publishes the rows whose
job was lost (:mod:`configurator.inquiries.outbox`).

The inquiry and its mail rows are stored before any mail is tried. A mail server that
refuses or cannot be reached, and a database that cannot be reached, are retried with
exponential backoff (about 2 s, 4 s … up to 10 minutes apart, eight times); after the
last try the failure stays on the inquiry (``mail_error``) for presales to see and the
sweep goes on trying for :data:`~configurator.inquiries.outbox.SWEEP_MAX_AGE`. A row
that went out is never sent again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import DatabaseError

from configurator.celery import app
from configurator.inquiries import outbox

logger = logging.getLogger(__name__)

RETRIED_ERRORS = (*outbox.MAIL_ERRORS, DatabaseError)
MAX_RETRIES = 8
SWEEP_BATCH = 200
"""Rows one sweep publishes at most; the next sweep, a minute later, takes the rest."""


@app.task(
    bind=True,
    acks_late=True,
    ignore_result=True,  # nobody waits for it: publishing needs no result store
    max_retries=MAX_RETRIES,
    soft_time_limit=50,
    time_limit=60,
)
def send_inquiry_mail(self, mail_id: int) -> str:  # type: ignore[no-untyped-def]
    """Send outbox row ``mail_id``; ``sent``, ``already sent``, ``busy`` (another
    sender has it), or ``failed`` after the last retry."""
    try:
        return outbox.outbox_send(mail_id=mail_id)
    except RETRIED_ERRORS as exc:
        retries = self.request.retries or 0
        if retries >= MAX_RETRIES:
            return "failed"
        if self.request.is_eager:  # in-process (no broker): the retries run at once
            return str(self.apply((mail_id,), retries=retries + 1).result)
        countdown = outbox.retry_delay_seconds(retries + 1)
        raise self.retry(exc=exc, countdown=countdown) from exc


@app.task(acks_late=True, ignore_result=True, soft_time_limit=50, time_limit=60)
def send_due_mails() -> int:
    """Publish a send job for every row :func:`~configurator.inquiries.outbox.outbox_due`
    returns (at most :data:`SWEEP_BATCH`); the number published."""
    due = list(outbox.outbox_due().values_list("pk", flat=True)[:SWEEP_BATCH])
    return outbox_publish(mail_ids=due)


def outbox_publish(*, mail_ids: Sequence[int]) -> int:
    """Publish the send jobs of rows ``mail_ids`` in order; the number published.

    A broker that cannot be reached is logged, never raised: the row it failed on and
    the rows after it (each would wait as long again) are recorded as not queued
    (:func:`~configurator.inquiries.outbox.outbox_not_queued`) and stay in the outbox,
    due to the next sweep.
    """
    for published, mail_id in enumerate(mail_ids):
        try:
            send_inquiry_mail.delay(mail_id)
        except Exception as exc:  # kombu's OperationalError, a timeout, the result store
            logger.warning("inquiry mails %s not queued (%s)", list(mail_ids[published:]), exc)
            try:
                outbox.outbox_not_queued(mail_ids=mail_ids[published:], error=f"not queued: {exc}")
            except DatabaseError:  # the rows stay due to the sweep all the same
                logger.warning("inquiry mails: publish failure not recorded")
            return published
    return len(mail_ids)
