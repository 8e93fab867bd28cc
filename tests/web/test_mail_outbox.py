"""No inquiry mail is lost or sent twice: the outbox (configurator.inquiries.outbox).

Real components: the Celery app publishing to a broker on a dead port (``dead_broker``),
the real SMTP server of ``conftest.py`` counting what it accepted, the send task run
in-process (``eager_tasks``) where a worker would run it, and two threads sending the
same row at once against the same database.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client
from django.utils import timezone

from configurator.celery import app
from configurator.inquiries import outbox
from configurator.inquiries.models import Inquiry, InquiryMail
from configurator.inquiries.tasks import send_due_mails
from tests.seed_form import seed_form
from tests.web.conftest import Refusing, broker_reconnect

EN = {"Accept-Language": "en"}
CONTACT = {"name": "Dana", "company": "Beispiel GmbH", "email": "d@example.com", "consent": "on"}
BOTH = ["d@example.com", "presales@example.com"]


def recipients(smtp: Refusing) -> list[str]:
    return sorted(r for rcpt, _ in smtp.accepted for r in rcpt)


def submit(client: Client, capture: Any, *, execute: bool = True) -> Inquiry:
    with capture(execute=execute):
        response = client.post("/quote/", {**seed_form(), **CONTACT}, headers=EN)
    assert response.status_code == 303
    return Inquiry.objects.get()


@pytest.mark.django_db
def test_mails_of_a_request_made_while_the_broker_was_down_go_out_with_the_sweep(
    client: Client, smtp: Refusing, dead_broker: None, django_capture_on_commit_callbacks: Any
) -> None:
    inquiry = submit(client, django_capture_on_commit_callbacks)
    assert inquiry.mail_error.startswith("not queued")
    assert InquiryMail.objects.filter(inquiry=inquiry, sent_at=None).count() == 2
    assert smtp.accepted == []
    # The broker is back; the worker's sweep (run in-process here) publishes both rows.
    app.conf.task_always_eager = True
    broker_reconnect()
    assert send_due_mails() == 2
    assert recipients(smtp) == BOTH
    inquiry.refresh_from_db()
    assert inquiry.mail_error == "" and inquiry.customer_mailed_at and inquiry.presales_mailed_at
    # A second sweep and the operator's command find nothing left to send.
    assert send_due_mails() == 0
    call_command("send_pending_mail")
    assert recipients(smtp) == BOTH
    thanks = client.get("/quote/thanks/", headers=EN).content.decode()
    assert "We have sent you a copy by email." in thanks


@pytest.mark.django_db
def test_a_web_worker_killed_after_the_commit_leaves_its_mails_to_the_sweep(
    client: Client, smtp: Refusing, eager_tasks: None, django_capture_on_commit_callbacks: Any
) -> None:
    # The commit's callbacks never run: the process died before it published.
    inquiry = submit(client, django_capture_on_commit_callbacks, execute=False)
    assert smtp.accepted == [] and inquiry.mail_error == ""
    # The publish of the commit may still be on its way: not swept at once ...
    assert send_due_mails() == 0
    # ... but once outbox.FIRST_SWEEP_SECONDS (60 s) have passed.
    later = timezone.now() + timedelta(seconds=outbox.FIRST_SWEEP_SECONDS + 1)
    assert outbox.outbox_due(now=later).count() == 2
    call_command("send_pending_mail")
    assert recipients(smtp) == BOTH
    assert outbox.outbox_due(now=later).count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("smtp", [100], indirect=True)
def test_the_command_says_in_one_line_what_could_not_be_sent(
    client: Client, smtp: Refusing, django_capture_on_commit_callbacks: Any
) -> None:
    submit(client, django_capture_on_commit_callbacks, execute=False)
    with pytest.raises(CommandError) as raised:
        call_command("send_pending_mail")
    assert raised.value.returncode == 1
    message = str(raised.value)
    assert message.startswith("0 inquiry mail(s) sent, 2 not sent (SMTPDataError")
    assert "\n" not in message
    # Both stay in the outbox with their error, for the next try.
    assert set(InquiryMail.objects.values_list("last_error", flat=True)) == {
        "presales mail: SMTPDataError: (554, b'5.7.1 Message refused')",
        "customer mail: SMTPDataError: (554, b'5.7.1 Message refused')",
    }


@pytest.mark.django_db
@pytest.mark.parametrize("smtp", [1], indirect=True)
def test_mail_error_is_cleared_when_the_mail_goes_out(
    client: Client, smtp: Refusing, django_capture_on_commit_callbacks: Any
) -> None:
    inquiry = submit(client, django_capture_on_commit_callbacks, execute=False)
    with pytest.raises(CommandError):
        call_command("send_pending_mail")  # presales' mail is refused, the customer's sent
    inquiry.refresh_from_db()
    assert inquiry.mail_error.startswith("presales mail: SMTPDataError")
    assert inquiry.customer_mailed_at and inquiry.presales_mailed_at is None
    call_command("send_pending_mail")
    inquiry.refresh_from_db()
    assert inquiry.mail_error == "" and inquiry.presales_mailed_at
    assert recipients(smtp) == BOTH


@pytest.mark.django_db(transaction=True)
def test_two_senders_of_one_row_send_it_once(smtp: Refusing, settings: Any) -> None:
    smtp.delay_s = 0.5  # the first sender is still talking to the server
    inquiry = Inquiry.objects.create(
        model="Qwen/Qwen3-32B-FP8",
        context_tokens=8192,
        users=500,
        kv_dtype="fp8",
        gpu="rtx-pro-6000-bse",
        gpus_per_node=4,
        name="Dana",
        company="B",
        email="d@example.com",
        consent=True,
        reference="INQ-2026-000001",
    )
    (row,) = outbox.outbox_add(inquiry=inquiry, kinds=["customer"])
    outcomes: list[str] = []

    def send() -> None:
        try:
            outcomes.append(outbox.outbox_send(mail_id=row.pk))
        finally:
            connection.close()

    senders = [threading.Thread(target=send) for _ in range(2)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(timeout=30)
    assert sorted(outcomes) == ["busy", "sent"]
    assert recipients(smtp) == ["d@example.com"]
    assert outbox.outbox_send(mail_id=row.pk) == "already sent"
