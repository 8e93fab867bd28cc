"""Mail about an inquiry: ``send_inquiry_mail(inquiry_id, kind)``, one task per mail.

The inquiry is stored before any mail is tried. A mail server that refuses or cannot be
reached is retried with exponential backoff (about 2 s, 4 s … up to 10 minutes apart,
eight times, a good hour in all); after the last try the failure stays on the inquiry
(``mail_error``) for presales to see. A mail that went out is never sent again.
"""

from __future__ import annotations

import smtplib

from configurator.celery import app
from configurator.inquiries import mail

MAIL_ERRORS = (smtplib.SMTPException, OSError)
MAX_RETRIES = 8


@app.task(bind=True, acks_late=True, max_retries=MAX_RETRIES, soft_time_limit=50, time_limit=60)
def send_inquiry_mail(self, inquiry_id: int, kind: str) -> str:  # type: ignore[no-untyped-def]
    """Send inquiry ``inquiry_id``'s ``presales`` or ``customer`` mail; ``sent``,
    ``already sent``, or ``failed`` after the last retry."""
    try:
        sent = mail.inquiry_mail_send(inquiry_id=inquiry_id, kind=kind)
    except MAIL_ERRORS as exc:
        error = f"{kind} mail: {type(exc).__name__}: {exc}"
        mail.inquiry_mail_failed(inquiry_id=inquiry_id, error=error)
        retries = self.request.retries or 0
        if retries >= MAX_RETRIES:
            return "failed"
        if self.request.is_eager:  # in-process (no broker): the retries run at once
            return str(self.apply((inquiry_id, kind), retries=retries + 1).result)
        countdown = min(600, 2 ** (retries + 1))
        raise self.retry(exc=exc, countdown=countdown) from exc
    return "sent" if sent else "already sent"
