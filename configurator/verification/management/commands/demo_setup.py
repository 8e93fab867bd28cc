"""``manage.py demo_setup``: load the bundled price list and benchmark data, create a
demo presales login for the embedded default and one example inquiry (the seed
document's worked example, docs/sizing.md) for its queue. Safe to run repeatedly."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from configurator.catalog.services import pricelist_load_demo
from configurator.inquiries.forms import WorkloadForm
from configurator.inquiries.models import Inquiry
from configurator.inquiries.services import inquiry_create
from configurator.verification.services import benchmarks_load_initial

DEMO_USERNAME = "presales"
DEMO_INQUIRY_EMAIL = "demo-customer@example.com"
"""The example inquiry's contact address (RFC 2606's reserved domain): one inquiry from
it is kept, and no mail is sent for it."""
DEMO_WORKLOAD = {
    "model": "Qwen/Qwen3-32B-FP8",
    "context_tokens": "8192",
    "users": "500",
    "kv_dtype": "fp8",
    "gpu": "rtx-pro-6000-se",
    "gpus_per_node": "4",
    "new_conversations_per_day": "2000",
}
"""The sizing article's worked example (docs/sizing.md) as the configurator's form fields."""
PRESALES_PERMISSIONS = {
    ("catalog", "price"): ("view", "add", "change", "delete"),
    ("catalog", "publicpricing"): ("view", "change"),
    ("verification", "benchmarkrecord"): ("view", "add", "change", "delete"),
}
"""What the presales group may do in ``/admin/``: keep the price list (CSV import and
export) and the benchmark records the verification compares against."""


def presales_permissions() -> list[Permission]:
    """The :data:`PRESALES_PERMISSIONS` as permission rows."""
    return [
        Permission.objects.get(
            content_type__app_label=app, content_type__model=model, codename=f"{action}_{model}"
        )
        for (app, model), actions in PRESALES_PERMISSIONS.items()
        for action in actions
    ]


class Command(BaseCommand):
    help = "Load demo prices and benchmark data and create the demo presales login."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url",
            default="http://127.0.0.1:8000/",
            help="where the server will listen, for the printed login address",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        with transaction.atomic():
            skus = pricelist_load_demo()
            records = benchmarks_load_initial()
            password = secrets.token_urlsafe(10)
            user, _ = User.objects.get_or_create(
                username=DEMO_USERNAME, defaults={"email": "presales@localhost"}
            )
            user.is_staff = True
            user.set_password(password)
            user.save(update_fields=["is_staff", "password"])
            group, _ = Group.objects.get_or_create(name="presales")
            group.permissions.add(*presales_permissions())
            user.groups.add(group)
            example = _example_inquiry()
        self.stdout.write(f"Price list: {skus} SKUs. Benchmark records: {records}.")
        if example is not None:
            self.stdout.write(f"Example inquiry in the presales queue: {example}.")
        self.stdout.write(
            f"Demo presales login: user '{DEMO_USERNAME}', password '{password}' "
            f"(new on every start) at {options['base_url'].rstrip('/')}/presales/"
        )


def _example_inquiry() -> str | None:
    """The reference of the example inquiry, stored unless one is there already (no
    mail); ``None`` when the seed workload cannot be sized here."""
    kept = Inquiry.objects.filter(email=DEMO_INQUIRY_EMAIL).first()
    if kept is not None:
        return kept.reference
    form = WorkloadForm({**WorkloadForm.defaults(), **DEMO_WORKLOAD})
    if not form.is_valid() or form.plan is None:
        return None
    inquiry, _ = inquiry_create(
        workload=form.inquiry_columns(),
        plan=form.plan,
        contact={
            "name": "Demo Customer",
            "company": "Example Inference GmbH",
            "email": DEMO_INQUIRY_EMAIL,
            "message": "An example inquiry of the demo: the seed workload, 500 users.",
            "consent": True,
        },
        language="de",
        notify=False,
    )
    return inquiry.reference
