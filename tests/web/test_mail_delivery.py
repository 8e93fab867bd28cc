"""Mail about an inquiry goes through a Celery task with retries, over real SMTP.

The SMTP server is aiosmtpd on 127.0.0.1 (the ``smtp`` fixture of ``conftest.py``); it
refuses the first ``refusals`` messages with ``554`` and accepts the rest. The task runs
in-process (``eager_tasks``); its retries run at once there. A closed port stands for a
mail server that is down.
"""

from __future__ import annotations

from email import message_from_bytes
from typing import Any

import pytest
from django.test import Client

from configurator.inquiries.models import Inquiry
from configurator.inquiries.tasks import MAX_RETRIES
from tests.seed_form import seed_form
from tests.web.conftest import Refusing
from tests.web.ports import free_port

pytestmark = pytest.mark.django_db

EN = {"Accept-Language": "en"}
CONTACT = {
    "name": "Dana Schulz",
    "company": "Beispiel GmbH",
    "email": "dana@example.com",
    "consent": "on",
}


def submit(client: Client, capture: Any, **contact: str) -> Any:
    with capture(execute=True):
        return client.post("/quote/", {**seed_form(), **CONTACT, **contact}, headers=EN)


@pytest.mark.parametrize("smtp", [3], indirect=True)
def test_a_refusing_server_is_retried_until_both_mails_are_out(
    client: Client, smtp: Refusing, eager_tasks: None, django_capture_on_commit_callbacks: Any
) -> None:
    response = submit(client, django_capture_on_commit_callbacks)
    assert response.status_code == 303
    inquiry = Inquiry.objects.get()
    assert smtp.refused == 3
    assert sorted(rcpt[0] for rcpt, _ in smtp.accepted) == [
        "dana@example.com",
        "presales@example.com",
    ]
    assert inquiry.presales_mailed_at and inquiry.customer_mailed_at
    thanks = client.get("/quote/thanks/", headers=EN).content.decode()
    assert "We have sent you a copy by email." in thanks


def test_a_mail_server_that_is_down_loses_no_inquiry(
    client: Client,
    settings: Any,
    eager_tasks: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()  # nothing listens
    settings.HF_HUB_OFFLINE = True
    response = submit(client, django_capture_on_commit_callbacks)
    assert response.status_code == 303
    inquiry = Inquiry.objects.get()
    assert inquiry.presales_mailed_at is None and inquiry.customer_mailed_at is None
    assert "ConnectionRefusedError" in inquiry.mail_error
    thanks = client.get("/quote/thanks/", headers=EN).content.decode()
    assert str(inquiry.reference) in thanks
    assert "We have sent you a copy" not in thanks and "on its way" in thanks


@pytest.mark.parametrize("smtp", [100], indirect=True)
def test_after_the_last_retry_the_failure_stays_on_the_inquiry(
    client: Client, smtp: Refusing, eager_tasks: None, django_capture_on_commit_callbacks: Any
) -> None:
    assert submit(client, django_capture_on_commit_callbacks).status_code == 303
    inquiry = Inquiry.objects.get()
    # One first try and MAX_RETRIES retries for each of the two mails.
    assert smtp.refused == 2 * (MAX_RETRIES + 1)
    assert "554" in inquiry.mail_error and inquiry.customer_mailed_at is None


def test_line_breaks_in_contact_fields_add_no_header(
    client: Client, smtp: Refusing, eager_tasks: None, django_capture_on_commit_callbacks: Any
) -> None:
    response = submit(
        client,
        django_capture_on_commit_callbacks,
        company="ACME\r\nBcc: victim@example.org",
        name="Eve\nBcc: victim@example.org",
    )
    assert response.status_code == 303
    inquiry = Inquiry.objects.get()
    assert inquiry.company == "ACME Bcc: victim@example.org"  # one line
    recipients = sorted(r for rcpt, _ in smtp.accepted for r in rcpt)
    assert recipients == ["dana@example.com", "presales@example.com"]
    for _rcpt, content in smtp.accepted:
        mail = message_from_bytes(content)
        assert mail["Bcc"] is None
        body = mail.get_payload(decode=True).decode()
        assert not any(line.startswith("Bcc:") for line in body.splitlines())


@pytest.mark.parametrize(("language", "greeting"), [("en", "Hello,"), ("de", "Guten Tag,")])
def test_the_confirmation_to_a_typed_address_carries_no_typed_name(
    client: Client,
    smtp: Refusing,
    eager_tasks: None,
    django_capture_on_commit_callbacks: Any,
    language: str,
    greeting: str,
) -> None:
    spam = "Win a prize at www.example.org"
    address = f"target-{language}@example.com"  # its own: the per-address limit counts
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/quote/",
            {**seed_form(), **CONTACT, "name": spam, "email": address},
            headers={"Accept-Language": language},
        )
    assert response.status_code == 303
    (customer,) = [c for rcpt, c in smtp.accepted if rcpt == [address]]
    body = message_from_bytes(customer).get_payload(decode=True).decode()
    assert body.startswith(greeting) and spam not in body
