"""Builders for the presales tests: the seed example's inquiry, a bare quote and a
presales login."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser

from configurator.catalog.services import pricelist_load_demo
from configurator.inquiries.models import Inquiry
from configurator.planning.services import plan_create
from configurator.quotes.models import Quote, QuoteAlternative
from sizing.summary import plan_summary
from sizing.workload import FIELDS, SEED_WORKLOAD, stored_inputs

SEED_INPUTS: dict[str, Any] = stored_inputs(SEED_WORKLOAD)
"""The seed's worked example (docs/sizing.md): Qwen3-32B-FP8, 8,192 tokens, 500 users,
4 × RTX PRO 6000 SE, FP8 cache, 2,000 new conversations a day, as stored inputs."""


def make_inquiry(*, language: str = "en", **overrides: Any) -> Inquiry:
    """A stored inquiry for the seed example (``overrides`` change workload fields or the
    contact)."""
    workload = SEED_WORKLOAD.replace(**{k: v for k, v in overrides.items() if k in FIELDS})
    contact = {k: v for k, v in overrides.items() if k not in FIELDS}
    plan = plan_create(workload)
    inquiry = Inquiry.objects.create(
        **workload.to_json(),
        plan_summary=plan_summary(plan),
        name=contact.get("name", "Erika Mustermann"),
        company=contact.get("company", "Beispiel AG"),
        email=contact.get("email", "erika@example.com"),
        language=language,
        consent=True,
    )
    inquiry.reference = Inquiry.reference_for(year=inquiry.received_at.year, pk=inquiry.pk)
    inquiry.save(update_fields=["reference"])
    return inquiry


def make_quote(*inputs: dict[str, Any], customer_name: str = "Test customer") -> Quote:
    """A stored draft with one alternative per stored ``inputs`` (the seed example's
    when none), titled ``A0``, ``A1`` …, with no lines and an empty plan summary: what
    the verification job and the bundle read is the inputs alone."""
    quote = Quote.objects.create(customer_name=customer_name)
    for position, item in enumerate(inputs or (SEED_INPUTS,)):
        QuoteAlternative.objects.create(
            quote=quote, position=position, label=f"A{position}", inputs=item, plan_summary={}
        )
    return quote


def make_presales(username: str = "presales") -> AbstractUser:
    """A staff user (the presales role) with the demo prices loaded."""
    pricelist_load_demo()
    user: AbstractUser = get_user_model().objects.create_user(  # type: ignore[assignment]
        username=username, password="pw-for-tests-only", is_staff=True
    )
    return user
