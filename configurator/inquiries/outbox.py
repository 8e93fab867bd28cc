"""The mail outbox: every mail about an inquiry is a row, sent once.

The rows (:class:`~configurator.inquiries.models.InquiryMail`) are written in the
inquiry's own transaction, so a stored inquiry always has its mails, whatever happens
after the commit (a broker that is down, a web worker killed before it published).
Publishing a send job is at-least-once: the job published after the commit, its
retries, the periodic sweep (:func:`outbox_due`, every minute in the worker's beat) and
``manage.py send_pending_mail`` may all name the same row. Sending is once per row: a
sender first claims the row with one conditional ``UPDATE`` (unsent, and not claimed by
another sender within :data:`CLAIM_SECONDS`), and only the one that claimed it hands it
to the mail server. The claim outlasts the send job's hard time limit (60 s), so a
claim is never taken over while its sender may still be running; a sender killed
mid-send leaves its claim to expire and the sweep sends the row again.

The one window left is a mail the server accepted whose sender then could not record
it (the database went away in between): the sender keeps trying to record it for
:data:`RECORD_TRIES` seconds before the claim is left to expire.
"""

from __future__ import annotations

import logging
import smtplib
import time
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from configurator.inquiries import mail
from configurator.inquiries.models import Inquiry, InquiryMail

logger = logging.getLogger(__name__)

MAIL_ERRORS = (smtplib.SMTPException, OSError)
"""What a mail server that refuses or cannot be reached raises."""

CLAIM_SECONDS = 120
"""How long a claim holds: above the send job's hard time limit (60 s)."""
FIRST_SWEEP_SECONDS = 60
"""A new row waits this long for the job published at commit before the sweep takes it."""
SWEEP_MAX_AGE = timedelta(days=3)
"""The sweep stops trying rows older than this; ``send_pending_mail`` still sends them."""
MAX_DELAY_SECONDS = 600
RECORD_TRIES = 20


def retry_delay_seconds(attempts: int) -> int:
    """Seconds before the next attempt after ``attempts`` failed ones: 2, 4, 8 … at most
    :data:`MAX_DELAY_SECONDS` (10 minutes)."""
    return int(min(MAX_DELAY_SECONDS, 2 ** max(1, attempts)))


def outbox_add(*, inquiry: Inquiry, kinds: Iterable[str] = mail.MAIL_KINDS) -> list[InquiryMail]:
    """Write ``inquiry``'s mails into the outbox; call inside the inquiry's transaction.

    Returns:
        The new rows, one per kind (``presales``, ``customer``), first due to the sweep
        :data:`FIRST_SWEEP_SECONDS` from now.
    """
    due_at = timezone.now() + timedelta(seconds=FIRST_SWEEP_SECONDS)
    return InquiryMail.objects.bulk_create(
        InquiryMail(inquiry=inquiry, kind=kind, due_at=due_at) for kind in kinds
    )


def _claim(mail_id: int, now: datetime) -> bool:
    """Claim row ``mail_id`` for one sender; True for the one sender that got it."""
    claimable = Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
    claimed = InquiryMail.objects.filter(Q(pk=mail_id, sent_at__isnull=True) & claimable).update(
        claimed_until=now + timedelta(seconds=CLAIM_SECONDS), attempts=F("attempts") + 1
    )
    return claimed == 1


def _record_sent(row: InquiryMail) -> None:
    """Mark ``row`` sent, set the inquiry's ``<kind>_mailed_at`` and keep as its
    ``mail_error`` only the error of a mail still unsent (``""`` when none is)."""
    now = timezone.now()
    with transaction.atomic():
        InquiryMail.objects.filter(pk=row.pk).update(sent_at=now, claimed_until=None, last_error="")
        unsent = InquiryMail.objects.filter(inquiry_id=row.inquiry_id, sent_at__isnull=True)
        still_failing = unsent.exclude(last_error="").values_list("last_error", flat=True).first()
        Inquiry.objects.filter(pk=row.inquiry_id).update(
            **{f"{row.kind}_mailed_at": now, "mail_error": still_failing or ""}
        )


def _record_sent_despite_outage(row: InquiryMail) -> None:
    """:func:`_record_sent`, tried again once a second while the database is away, so a
    mail the server accepted is not sent again when its claim expires."""
    for attempt in range(RECORD_TRIES):
        try:
            _record_sent(row)
            return
        except DatabaseError as exc:
            if attempt == RECORD_TRIES - 1:
                raise
            logger.warning("inquiry mail %s sent, not yet recorded (%s)", row.pk, exc)
            connection.close()  # the next try connects afresh
            time.sleep(1)


def outbox_send(*, mail_id: int) -> str:
    """Send outbox row ``mail_id`` unless it went out or another sender holds it.

    Returns:
        ``sent``, ``already sent`` (or no such row), or ``busy`` (another sender holds
        its claim).

    Raises:
        smtplib.SMTPException, OSError: the mail server refused or could not be reached;
            the row records the error and its next due time (:func:`outbox_failed`).
        django.db.DatabaseError: the database could not be reached.
    """
    if not _claim(mail_id, timezone.now()):
        row_state = InquiryMail.objects.filter(pk=mail_id).values("sent_at").first()
        return "busy" if row_state and row_state["sent_at"] is None else "already sent"
    row = InquiryMail.objects.select_related("inquiry").get(pk=mail_id)
    try:
        mail.inquiry_mail_deliver(inquiry=row.inquiry, kind=row.kind)
    except MAIL_ERRORS as exc:
        _release(mail_id, f"{row.kind} mail: {type(exc).__name__}: {exc}")
        raise
    except BaseException:  # the soft time limit, a worker shutting down: not sent
        _release(mail_id, None)
        raise
    _record_sent_despite_outage(row)
    return "sent"


def _release(mail_id: int, error: str | None) -> None:
    try:
        outbox_failed(mail_id=mail_id, error=error)
    except DatabaseError as exc:  # the claim then expires on its own
        logger.warning("inquiry mail %s: failure not recorded (%s)", mail_id, exc)


def outbox_failed(*, mail_id: int, error: str | None) -> int:
    """Release row ``mail_id``'s claim and put off its next attempt; with ``error``, keep
    it on the row and as the inquiry's ``mail_error`` (presales sees it).

    Returns:
        Seconds until the row is due again (:func:`retry_delay_seconds`).
    """
    row = InquiryMail.objects.filter(pk=mail_id).only("attempts", "inquiry_id", "kind").first()
    if row is None:
        return 0
    delay = retry_delay_seconds(row.attempts)
    changes: dict[str, object] = {
        "claimed_until": None,
        "due_at": timezone.now() + timedelta(seconds=delay),
    }
    if error is not None:
        changes["last_error"] = error[:500]
        Inquiry.objects.filter(pk=row.inquiry_id).update(mail_error=error[:500])
    InquiryMail.objects.filter(pk=mail_id, sent_at__isnull=True).update(**changes)
    return delay


def outbox_not_queued(*, mail_ids: Sequence[int], error: str) -> None:
    """Record that the send jobs of rows ``mail_ids`` could not be published: due to the
    next sweep at once, ``error`` on the rows and their inquiries."""
    text = error[:500]
    rows = InquiryMail.objects.filter(pk__in=list(mail_ids), sent_at__isnull=True)
    rows.update(due_at=timezone.now(), last_error=text)
    Inquiry.objects.filter(mails__pk__in=list(mail_ids)).update(mail_error=text)


def outbox_due(*, now: datetime | None = None) -> QuerySet[InquiryMail]:
    """The rows the periodic sweep publishes: unsent, unclaimed, due, and younger than
    :data:`SWEEP_MAX_AGE`; the oldest due first."""
    now = now or timezone.now()
    return outbox_pending(now=now).filter(due_at__lte=now, created_at__gte=now - SWEEP_MAX_AGE)


def outbox_pending(*, now: datetime | None = None) -> QuerySet[InquiryMail]:
    """Every row not sent and not claimed by a sender now, whatever its due time."""
    now = now or timezone.now()
    unclaimed = Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
    return InquiryMail.objects.filter(unclaimed, sent_at__isnull=True).order_by("due_at", "pk")
