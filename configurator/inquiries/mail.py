"""The two mails about an inquiry: to presales and to the customer.

Rendered and handed to the mail server here; the outbox
(:mod:`configurator.inquiries.outbox`) decides when, and records that each went out.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.utils import translation

from configurator.inquiries import notes
from configurator.inquiries.models import Inquiry
from sizing.hardware import catalog

MAIL_KINDS = ("presales", "customer")
"""Presales first: the request is worked on from that mail."""


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


def inquiry_mail_deliver(*, inquiry: Inquiry, kind: str) -> None:
    """Hand one of ``inquiry``'s mails to the mail server; records nothing.

    ``kind`` is ``presales`` (in German, the house language) or ``customer`` (in the
    customer's language). Header values are single lines (subjects are joined to one
    line, the contact's one-line fields are cleaned by the form), so a line break in
    the company name can neither fail the mail nor add a header. Whether it went out
    is kept by the outbox (:mod:`configurator.inquiries.outbox`).

    Raises:
        smtplib.SMTPException, OSError: the mail server refused or could not be reached.
    """
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
