"""The two mails about an inquiry: to presales and to the customer.

Sent by :func:`configurator.inquiries.tasks.send_inquiry_mail`, one task per mail.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.utils import timezone, translation

from configurator.inquiries import notes
from configurator.inquiries.models import Inquiry
from sizing.hardware import catalog

MAIL_KINDS = ("presales", "customer")


def _mail_context(inquiry: Inquiry) -> dict[str, Any]:
    summary = inquiry.plan_summary
    gpu = catalog.gpus().get(inquiry.gpu)
    verdict_notes = summary.get("verdict_notes", {})
    return {
        "inquiry": inquiry,
        "summary": summary,
        "gpu_name": gpu.name if gpu else inquiry.gpu,
        "reasons": notes.from_snapshot(verdict_notes, "reasons"),
        "warnings": notes.from_snapshot(verdict_notes, "warnings"),
    }


def inquiry_mail_send(*, inquiry_id: int, kind: str) -> bool:
    """Send one of the inquiry's mails unless it went out already; True when sent now.

    ``kind`` is ``presales`` (in German, the house language) or ``customer`` (in the
    customer's language). Header values are single lines (subjects are joined to one
    line, the contact's one-line fields are cleaned by the form), so a line break in
    the company name can neither fail the mail nor add a header.

    Raises:
        smtplib.SMTPException, OSError: the mail server refused or could not be reached
            (the task retries).
    """
    inquiry = Inquiry.objects.get(pk=inquiry_id)
    field = f"{kind}_mailed_at"
    if getattr(inquiry, field) is not None:
        return False
    context = _mail_context(inquiry)
    if kind == "presales":
        language, recipient = settings.LANGUAGE_CODE, str(settings.PRESALES_EMAIL)
    else:
        language, recipient = inquiry.language, inquiry.email
    with translation.override(language):
        subject = render_to_string(f"inquiries/email/{kind}_subject.txt", context)
        send_mail(
            subject=" ".join(subject.split()),
            message=render_to_string(f"inquiries/email/{kind}.txt", context),
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=[recipient],
        )
    Inquiry.objects.filter(pk=inquiry_id).update(**{field: timezone.now()})
    return True


def inquiry_mail_failed(*, inquiry_id: int, error: str) -> None:
    """Record the last mail failure of inquiry ``inquiry_id`` (shown to presales)."""
    Inquiry.objects.filter(pk=inquiry_id).update(mail_error=error[:500])
