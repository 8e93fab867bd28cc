"""Workflows of the public configurator: store an inquiry, tell presales and the customer."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import translation

from configurator.inquiries.models import Inquiry
from sizing.plan import Plan

RATE_LIMIT_COUNT = 5
"""Inquiries one client address may send per window."""
RATE_LIMIT_WINDOW_SECONDS = 3600


def inquiry_rate_limited(*, client_address: str) -> bool:
    """Count one inquiry attempt from ``client_address``; True once it is over the limit.

    The counter lives in Django's cache for :data:`RATE_LIMIT_WINDOW_SECONDS`, starting
    with the first attempt of the window.
    """
    key = f"inquiries:rate:{client_address}"
    cache.add(key, 0, timeout=RATE_LIMIT_WINDOW_SECONDS)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=RATE_LIMIT_WINDOW_SECONDS)
        count = 1
    return count > RATE_LIMIT_COUNT


def inquiry_create(
    *,
    workload: dict[str, Any],
    plan: Plan,
    contact: dict[str, Any],
    language: str,
) -> Inquiry:
    """Store an inquiry with the workload, a snapshot of the plan and the contact.

    Args:
        workload: cleaned data of :class:`~configurator.inquiries.forms.WorkloadForm`.
        plan: the plan the customer saw for that workload.
        contact: cleaned data of :class:`~configurator.inquiries.forms.ContactForm`.
        language: the customer's language code (``de`` or ``en``), used for their email.

    Returns:
        The saved inquiry with its reference ``INQ-<year>-<number>``. Emails to presales
        and to the customer are sent once the transaction commits.
    """
    with transaction.atomic():
        inquiry = Inquiry.objects.create(
            model_id=plan.request.model.repo_id,
            context_tokens=workload["context_tokens"],
            users=workload["users"],
            active_share_percent=workload["active_share_percent"],
            system_prompt_tokens=workload["system_prompt_tokens"],
            kv_dtype=workload["kv_dtype"],
            gpu_slug=workload["gpu"],
            gpus_per_node=workload["gpus_per_node"],
            serving_engine=workload.get("serving_engine") or "",
            new_conversations_per_day=workload["new_conversations_per_day"],
            plan_summary=plan.summary(),
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
    context = {"inquiry": inquiry, "summary": inquiry.plan_summary}
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
