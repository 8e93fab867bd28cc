"""Builders for the presales tests: the seed example's inquiry and a presales login."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser

from configurator.catalog.services import pricelist_load_demo
from configurator.inquiries.models import Inquiry
from configurator.planning.services import plan_create

# The seed's worked example (DESIGN §3; issue 2 item 5): Qwen3-32B-FP8, 8,192 tokens,
# 500 users, 4 × RTX PRO 6000 SE, FP8 cache, 2,000 new conversations a day.
SEED_INPUTS: dict[str, Any] = {
    "model_id": "Qwen/Qwen3-32B-FP8",
    "context_tokens": 8192,
    "users": 500,
    "gpu_slug": "rtx-pro-6000-se",
    "gpus_per_node": 4,
    "kv_dtype": "fp8",
    "new_conversations_per_day": 2000,
}


def make_inquiry(*, language: str = "en", **overrides: Any) -> Inquiry:
    """A stored inquiry for the seed example (``overrides`` change inputs or contact)."""
    inputs = {**SEED_INPUTS, **{k: v for k, v in overrides.items() if k in SEED_INPUTS}}
    contact = {k: v for k, v in overrides.items() if k not in SEED_INPUTS}
    plan = plan_create(**inputs)
    inquiry = Inquiry.objects.create(
        model_id=inputs["model_id"],
        context_tokens=inputs["context_tokens"],
        users=inputs["users"],
        kv_dtype=inputs["kv_dtype"],
        gpu_slug=inputs["gpu_slug"],
        gpus_per_node=inputs["gpus_per_node"],
        new_conversations_per_day=inputs["new_conversations_per_day"],
        plan_summary=plan.summary(),
        name=contact.get("name", "Erika Mustermann"),
        company=contact.get("company", "Beispiel AG"),
        email=contact.get("email", "erika@example.com"),
        language=language,
        consent=True,
    )
    inquiry.reference = Inquiry.reference_for(year=inquiry.received_at.year, pk=inquiry.pk)
    inquiry.save(update_fields=["reference"])
    return inquiry


def make_presales(username: str = "presales") -> AbstractUser:
    """A staff user (the presales role) with the demo prices loaded."""
    pricelist_load_demo()
    user: AbstractUser = get_user_model().objects.create_user(  # type: ignore[assignment]
        username=username, password="pw-for-tests-only", is_staff=True
    )
    return user
