"""Workflows of the public configurator: store an inquiry, tell presales and the customer."""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone

from configurator.clients import fail_open
from configurator.inquiries import mail, notes
from configurator.inquiries.models import Inquiry
from configurator.inquiries.tasks import send_inquiry_mail
from sizing.plan.orchestrator import Plan
from sizing.summary import plan_summary

logger = logging.getLogger(__name__)

RATE_LIMIT_WINDOW_SECONDS = 3600
DUPLICATE_WINDOW = timedelta(minutes=10)
"""An identical submission within this time shows the earlier inquiry's reference."""


def rate_limits() -> dict[str, int]:
    """``settings.INQUIRY_RATE_LIMITS`` per :data:`RATE_LIMIT_WINDOW_SECONDS`.

    ``per_email``: stored inquiries per e-mail address; ``per_address``: stored inquiries
    per client address, higher, since an office behind one proxy shares its address;
    ``attempts_per_address``: submissions of any kind (valid or not) per client address.
    """
    return dict(settings.INQUIRY_RATE_LIMITS)


def _counter(kind: str, value: str) -> str:
    digest = hashlib.sha256(value.strip().lower().encode()).hexdigest()[:32]
    return f"inquiries:{kind}:{digest}"


def _count(key: str) -> int:
    """Add one to the cache counter ``key`` (window from its first count); the new value."""
    cache.add(key, 0, timeout=RATE_LIMIT_WINDOW_SECONDS)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=RATE_LIMIT_WINDOW_SECONDS)
        return 1


def _limited(client_address: str, email: str) -> bool:
    limits = rate_limits()
    attempts = _count(_counter("attempts", client_address))
    by_address = int(cache.get(_counter("stored-address", client_address), 0))
    by_email = int(cache.get(_counter("stored-email", email), 0)) if email.strip() else 0
    return (
        by_email >= limits["per_email"]
        or by_address >= limits["per_address"]
        or attempts > limits["attempts_per_address"]
    )


def inquiry_rate_limited(*, client_address: str, email: str) -> bool:
    """Count one submission from ``client_address``; True when it must be refused.

    Refused once ``email`` (as typed, case-insensitive) has stored ``per_email``
    inquiries, the address has stored ``per_address``, or the address made more than
    ``attempts_per_address`` submissions, valid or not, within the window
    (:func:`rate_limits`). A few mistyped submissions never lock a customer out, and
    colleagues behind one proxy do not block each other. Counters live in Django's
    cache; when it is down, nothing is refused and the outage is logged.
    """
    return fail_open("inquiry rate limit", False, lambda: _limited(client_address, email))


def inquiry_rate_count(*, client_address: str, email: str) -> None:
    """Count one stored inquiry from ``client_address`` and ``email`` (fails open)."""

    def count() -> None:
        _count(_counter("stored-address", client_address))
        _count(_counter("stored-email", email))

    fail_open("inquiry rate count", None, count)


def inquiry_dedup_key(*, workload: dict[str, Any], contact: dict[str, Any]) -> str:
    """The key under which identical submissions collide: SHA-256 hex of email, inputs
    and message (email case-insensitive, message without surrounding blanks).

    Name, company, phone and consent are left out: a resubmission with a corrected name
    is still the same request.
    """
    content = {
        "email": str(contact["email"]).strip().lower(),
        "message": str(contact.get("message") or "").strip(),
        "workload": {k: workload.get(k) for k in sorted(workload)},
    }
    encoded = json.dumps(content, sort_keys=True, default=str).encode()
    return hashlib.sha256(encoded).hexdigest()


def inquiry_create(
    *,
    workload: dict[str, Any],
    plan: Plan,
    contact: dict[str, Any],
    language: str,
    notify: bool = True,
) -> tuple[Inquiry, bool]:
    """Store an inquiry with the workload, a snapshot of the plan and the contact.

    An identical submission (:func:`inquiry_dedup_key`) within :data:`DUPLICATE_WINDOW`
    stores nothing and returns the earlier inquiry. Race-safe: the key is a unique
    column, so of parallel identical submissions one row wins and the others read it.

    Args:
        workload: :meth:`~configurator.inquiries.forms.WorkloadForm.inquiry_columns`:
            the workload's fields, a private model's parsed config as ``private_config``
            with its weights, and the serving engine, by :class:`Inquiry` column.
        plan: the plan the customer saw for that workload.
        contact: cleaned data of :class:`~configurator.inquiries.forms.ContactForm`.
        language: the customer's language code (``de`` or ``en``), used for their email.
        notify: ``False`` to send no emails (the demo's example inquiry).

    Returns:
        ``(inquiry, created)``: the saved inquiry with its reference
        ``INQ-<year>-<number>``, and whether it is new. Emails to presales and to the
        customer are sent once the transaction of a new inquiry commits.
    """
    key = inquiry_dedup_key(workload=workload, contact=contact)
    # An older identical inquiry no longer blocks this one: release its key.
    Inquiry.objects.filter(dedup_key=key, received_at__lt=timezone.now() - DUPLICATE_WINDOW).update(
        dedup_key=None
    )
    for _attempt in range(2):
        try:
            inquiry = _inquiry_store(
                workload=workload,
                plan=plan,
                contact=contact,
                language=language,
                dedup_key=key,
                notify=notify,
            )
            return inquiry, True
        except IntegrityError:
            earlier = Inquiry.objects.filter(dedup_key=key).first()
            if earlier is not None:  # else its key was released meanwhile: store again
                return earlier, False
    raise RuntimeError(f"inquiry {key} could neither be stored nor found")


def _inquiry_store(
    *,
    workload: dict[str, Any],
    plan: Plan,
    contact: dict[str, Any],
    language: str,
    dedup_key: str,
    notify: bool,
) -> Inquiry:
    with transaction.atomic():
        inquiry = Inquiry.objects.create(
            dedup_key=dedup_key,
            **workload,
            plan_summary={**plan_summary(plan), "verdict_notes": notes.snapshot(plan.verdict)},
            name=contact["name"],
            company=contact["company"],
            email=contact["email"],
            phone=contact.get("phone") or "",
            message=contact.get("message") or "",
            consent=contact["consent"],
            language=language,
        )
        inquiry.reference = Inquiry.reference_for(year=inquiry.received_at.year, pk=inquiry.pk)
        inquiry.save(update_fields=["reference"])
        if notify:
            transaction.on_commit(lambda: inquiry_notify(inquiry=inquiry), robust=True)
    return inquiry


def inquiry_notify(*, inquiry: Inquiry) -> None:
    """Enqueue the mails to presales and to the customer (one task each, with retries).

    Called when the inquiry's transaction commits. A broker that cannot be reached
    loses no mail for good: the inquiry is stored, the failure is recorded in
    ``mail_error`` and logged, and presales sees the inquiry in the queue.
    """
    for kind in mail.MAIL_KINDS:
        try:
            send_inquiry_mail.delay(inquiry.pk, kind)
        except Exception as exc:  # the broker is down: record it, never fail the request
            logger.warning("inquiry %s: %s mail not queued (%s)", inquiry.reference, kind, exc)
            mail.inquiry_mail_failed(inquiry_id=inquiry.pk, error=f"not queued: {exc}")
