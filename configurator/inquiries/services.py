"""Workflows of the public configurator: store an inquiry, tell presales and the customer."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import timezone, translation

from configurator.inquiries import notes
from configurator.inquiries.models import Inquiry
from sizing import catalog
from sizing.plan import Plan

RATE_LIMIT_COUNT = 5
"""Stored inquiries one client address may send per window."""
RATE_LIMIT_ATTEMPTS = 30
"""Submissions (valid or not) one client address may make per window."""
RATE_LIMIT_WINDOW_SECONDS = 3600
DUPLICATE_WINDOW = timedelta(minutes=10)
"""An identical submission within this time shows the earlier inquiry's reference."""


def _counter(client_address: str, kind: str) -> str:
    return f"inquiries:{kind}:{client_address}"


def _count(key: str) -> int:
    """Add one to the cache counter ``key`` (window from its first count); the new value."""
    cache.add(key, 0, timeout=RATE_LIMIT_WINDOW_SECONDS)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=RATE_LIMIT_WINDOW_SECONDS)
        return 1


def inquiry_rate_limited(*, client_address: str) -> bool:
    """Count one submission from ``client_address``; True when it must be refused.

    Refused once the address has stored :data:`RATE_LIMIT_COUNT` inquiries (counted by
    :func:`inquiry_rate_count`) or made more than :data:`RATE_LIMIT_ATTEMPTS`
    submissions, valid or not, in :data:`RATE_LIMIT_WINDOW_SECONDS`. A few mistyped
    submissions therefore never lock a customer out. Counters live in Django's cache.
    """
    attempts = _count(_counter(client_address, "attempts"))
    stored = int(cache.get(_counter(client_address, "stored"), 0))
    return stored >= RATE_LIMIT_COUNT or attempts > RATE_LIMIT_ATTEMPTS


def inquiry_rate_count(*, client_address: str) -> None:
    """Count one stored inquiry from ``client_address`` towards :data:`RATE_LIMIT_COUNT`."""
    _count(_counter(client_address, "stored"))


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
) -> tuple[Inquiry, bool]:
    """Store an inquiry with the workload, a snapshot of the plan and the contact.

    An identical submission (:func:`inquiry_dedup_key`) within :data:`DUPLICATE_WINDOW`
    stores nothing and returns the earlier inquiry. Race-safe: the key is a unique
    column, so of parallel identical submissions one row wins and the others read it.

    Args:
        workload: :meth:`~configurator.inquiries.forms.WorkloadForm.workload`: its
            cleaned data, with a private model's parsed config as ``private_config``.
        plan: the plan the customer saw for that workload.
        contact: cleaned data of :class:`~configurator.inquiries.forms.ContactForm`.
        language: the customer's language code (``de`` or ``en``), used for their email.

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
                workload=workload, plan=plan, contact=contact, language=language, dedup_key=key
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
) -> Inquiry:
    with transaction.atomic():
        inquiry = Inquiry.objects.create(
            dedup_key=dedup_key,
            model_id=plan.request.model.repo_id,
            private_config=workload.get("private_config"),
            private_weights_gib=workload.get("weights_gib")
            if workload.get("private_config")
            else None,
            context_tokens=workload["context_tokens"],
            users=workload["users"],
            active_share_percent=workload["active_share_percent"],
            system_prompt_tokens=workload["system_prompt_tokens"],
            kv_dtype=workload["kv_dtype"],
            gpu_slug=workload["gpu"],
            gpus_per_node=workload["gpus_per_node"],
            serving_engine=workload.get("serving_engine") or "",
            new_conversations_per_day=workload["new_conversations_per_day"],
            plan_summary={**plan.summary(), "verdict_notes": notes.snapshot(plan.verdict)},
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
        transaction.on_commit(lambda: inquiry_notify(inquiry=inquiry))
    return inquiry


def inquiry_notify(*, inquiry: Inquiry) -> None:
    """Email presales (in German, the house language) and the customer (in theirs)."""
    summary = inquiry.plan_summary
    gpu = catalog.gpus().get(inquiry.gpu_slug)
    verdict_notes = summary.get("verdict_notes", {})
    context = {
        "inquiry": inquiry,
        "summary": summary,
        "gpu_name": gpu.name if gpu else inquiry.gpu_slug,
        "reasons": notes.from_snapshot(verdict_notes, "reasons"),
        "warnings": notes.from_snapshot(verdict_notes, "warnings"),
    }
    with translation.override(settings.LANGUAGE_CODE):
        send_mail(
            subject=render_to_string("inquiries/email/presales_subject.txt", context).strip(),
            message=render_to_string("inquiries/email/presales.txt", context),
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=[str(settings.PRESALES_EMAIL)],
        )
    with translation.override(inquiry.language):
        send_mail(
            subject=render_to_string("inquiries/email/customer_subject.txt", context).strip(),
            message=render_to_string("inquiries/email/customer.txt", context),
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=[inquiry.email],
        )
