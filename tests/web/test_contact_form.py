"""Requesting a quote: the inquiry is stored with the plan, presales and customer get mail.

The workload is the sizing article's worked example (docs/sizing.md): its plan has 204
conversations on the GPUs and 24 × 48 GB of host memory.
"""

from __future__ import annotations

import re
import threading
from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.core.cache import cache
from django.db import connection, connections
from django.test import Client

from configurator.inquiries.models import Inquiry
from configurator.inquiries.services import DUPLICATE_WINDOW, rate_limits
from tests.conftest import ci_requires

pytestmark = pytest.mark.django_db

EN = {"Accept-Language": "en"}


def request_data(**changes: Any) -> dict[str, Any]:
    """The seed workload (docs/sizing.md) plus a complete contact."""
    data: dict[str, Any] = {
        "model": "Qwen/Qwen3-32B-FP8",
        "context_tokens": 8192,
        "users": 500,
        "active_share": 60,
        "shared_prompt_tokens": 1000,
        "kv_dtype": "fp8",
        "gpu": "rtx-pro-6000-se",
        "gpus_per_node": 4,
        "serving_engine": "vllm",
        "new_conversations_per_day": 2000,
        "name": "Ada Muster",
        "company": "Muster & Söhne GmbH",
        "email": "ada@example.com",
        "phone": "",
        "message": "Two sites, one node each.",
        "consent": "on",
        "website": "",
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


@pytest.fixture(autouse=True)
def _isolated(settings: Any, eager_tasks: None) -> None:
    """No Hub lookups, a known presales address, a fresh rate-limit cache, and the mail
    task run in-process (its effect is what these tests check)."""
    settings.HF_HUB_OFFLINE = True
    settings.PRESALES_EMAIL = "presales@example.com"
    cache.clear()


def test_request_stores_inquiry_with_plan_and_confirms_with_reference(
    client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/quote/", request_data(), headers=EN)
    assert response.status_code == 303 and response["Location"] == "/quote/thanks/"
    inquiry = Inquiry.objects.get()
    assert re.fullmatch(rf"INQ-{inquiry.received_at.year}-\d{{6}}", inquiry.reference or "")
    assert inquiry.status == Inquiry.Status.NEW
    assert (inquiry.model, inquiry.context_tokens, inquiry.users) == (
        "Qwen/Qwen3-32B-FP8",
        8192,
        500,
    )
    assert (inquiry.active_share, inquiry.shared_prompt_tokens) == (0.6, 1000)
    assert inquiry.serving_engine == "vllm" and inquiry.language == "en" and inquiry.consent
    # Seed example with a shared 1,000-token prompt (docs/sizing.md §4): 1,000 × 128 KiB =
    # 0.12 GiB once per replica, 0.88 GiB per conversation: ⌊(51.09 − 0.12) / 0.88⌋ = 58
    # per card, 232 on the GPUs; tier 500 × 0.88 + 4 × 0.12 = 439.5 GiB → 110 GiB flag.
    assert inquiry.plan_summary["conversations_on_gpus"] == 232
    assert (inquiry.plan_summary["dimm_count"], inquiry.plan_summary["dimm_gb"]) == (24, 48)
    assert inquiry.plan_summary["vllm_kv_offloading_size_gib"] == 110
    assert inquiry.inputs["gpu"] == "rtx-pro-6000-se"

    reference = str(inquiry.reference)
    thanks = client.get("/quote/thanks/", headers=EN)
    assert thanks.status_code == 200 and reference in thanks.content.decode()

    assert sorted(m.to[0] for m in mail.outbox) == ["ada@example.com", "presales@example.com"]
    presales = next(m for m in mail.outbox if list(m.to) == ["presales@example.com"])
    customer = next(m for m in mail.outbox if list(m.to) == ["ada@example.com"])
    assert reference in presales.subject and "Muster & Söhne GmbH" in presales.body
    assert "24 × 48 GB = 1.152 GB" in presales.body  # presales reads German (LANGUAGE_CODE)
    assert customer.subject == f"Your quote request {inquiry.reference}"
    assert "24 × 48 GB = 1,152 GB" in customer.body  # the customer's language: English
    # The GPU by its name (sizing/data/hardware.json), not its slug.
    assert "4 × NVIDIA RTX PRO 6000 Blackwell Server Edition" in customer.body
    assert "rtx-pro-6000-se" not in customer.body
    # The verdict in each reader's language (sizing.verdict notes, configurator/locale):
    # 500 − 232 on the GPUs = 268 resting; 1,000 ms and more grouped per language.
    assert "268 of 500 conversations do not fit on the GPUs" in customer.body
    assert "268 von 500 Gesprächen passen nicht auf die GPUs" in presales.body
    reload_line = re.search(
        r"first token comes after about ([\d,]+) ms against about ([\d,]+) ms", customer.body
    )
    assert reload_line and "," in reload_line.group(2)  # full prefill ≥ 1,000 ms: grouped


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"consent": None}, "consent"),
        ({"email": "not-an-email"}, "email"),
        ({"name": ""}, "name"),
        ({"company": ""}, "company"),
        ({"users": 0}, "users"),
        ({"context_tokens": 10_000_001}, "context_tokens"),
        ({"model": "not a model id"}, "model"),
    ],
)
def test_invalid_request_stores_nothing_and_shows_the_field(
    client: Client, changes: dict[str, Any], field: str
) -> None:
    response = client.post("/quote/", request_data(**changes), headers=EN)
    assert response.status_code == 400
    assert re.search(rf'<p id="id_{field}_error"[^>]*>[^<]+</p>', response.content.decode())
    assert not Inquiry.objects.exists()
    assert mail.outbox == []


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        # an ANSI colour sequence (ESC, U+001B) and a bell: they recolour a terminal that
        # prints the presales mail or the log
        ("name", "Bob\x1b[31mRED\x07", "U+001B"),
        # RIGHT-TO-LEFT OVERRIDE (Unicode Standard Annex #9) reverses the text after it in
        # the queue, the PDF's address block and the mail subject
        ("company", "A\u202eCME", "U+202E"),
        ("phone", "+49 89\u2066 123", "U+2066"),
        ("message", "line one\n\x00line two", "U+0000"),
    ],
)
def test_hidden_characters_are_refused_at_their_field(
    client: Client, field: str, value: str, code: str
) -> None:
    response = client.post("/quote/", request_data(**{field: value}), headers=EN)
    assert response.status_code == 400
    error = re.search(rf'<p id="id_{field}_error"[^>]*>([^<]+)</p>', response.content.decode())
    assert error and f"invisible control character {code}" in error.group(1)
    assert not Inquiry.objects.exists()
    assert mail.outbox == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        # ZERO WIDTH SPACE, BYTE ORDER MARK, WORD JOINER (Unicode category Cf) and a
        # no-break space: a name or company a reader sees as blank
        ("name", "\ufeff"),
        ("company", "\u200b\u200b"),
        ("name", " \u2060\u00a0"),
    ],
)
def test_a_required_field_of_invisible_characters_is_empty(
    client: Client, field: str, value: str
) -> None:
    response = client.post("/quote/", request_data(**{field: value}), headers=EN)
    assert response.status_code == 400
    error = re.search(rf'<p id="id_{field}_error"[^>]*>([^<]+)</p>', response.content.decode())
    assert error and "This field is required." in error.group(1)
    assert not Inquiry.objects.exists()
    assert mail.outbox == []


def test_a_name_with_a_joiner_among_letters_is_taken(client: Client) -> None:
    # ZERO WIDTH NON-JOINER inside a Persian name is part of how it is written.
    name = "\u0645\u06cc\u200c\u0631\u0648\u06cc"
    response = client.post("/quote/", request_data(name=name), headers=EN)
    assert response.status_code == 303
    assert Inquiry.objects.get().name == name


@pytest.mark.parametrize("phone", ["<script>alert(1)</script>", "+49 <b>1</b>", "call me", "--"])
def test_a_phone_that_is_no_number_is_refused(client: Client, phone: str) -> None:
    response = client.post("/quote/", request_data(phone=phone), headers=EN)
    assert response.status_code == 400
    error = re.search(r'<p id="id_phone_error"[^>]*>([^<]+)</p>', response.content.decode())
    assert error and "Enter a phone number" in error.group(1)
    assert not Inquiry.objects.exists()


@pytest.mark.parametrize(
    "phone", ["+49 (0)89 123-456", "+1 555 0100 ext. 12", "089/123 45 67", "0049.89.1234x5"]
)
def test_phone_numbers_as_people_write_them_are_taken(client: Client, phone: str) -> None:
    message = "Two sites.\n\tOne node each."  # line breaks and tabs stay in a message
    response = client.post("/quote/", request_data(phone=phone, message=message), headers=EN)
    assert response.status_code == 303
    inquiry = Inquiry.objects.get()
    assert inquiry.phone == phone and inquiry.message == message


def test_honeypot_filled_stores_nothing(client: Client) -> None:
    response = client.post("/quote/", request_data(website="http://spam.example"), headers=EN)
    assert response.status_code == 400
    assert not Inquiry.objects.exists()
    assert mail.outbox == []


def test_rate_limit_per_email_address(client: Client) -> None:
    # settings.INQUIRY_RATE_LIMITS["per_email"] stored inquiries per e-mail address and hour.
    per_email = rate_limits()["per_email"]
    for n in range(per_email):
        sent = client.post("/quote/", request_data(message=f"Site {n}"), REMOTE_ADDR="192.0.2.1")
        assert sent.status_code == 303
    blocked = client.post(
        "/quote/", request_data(message="One more"), REMOTE_ADDR="192.0.2.9", headers=EN
    )
    html = blocked.content.decode()
    assert blocked.status_code == 429
    assert "Too many requests" in html
    # A real contact route instead: settings.PRESALES_EMAIL (set by the fixture above).
    assert '<a href="mailto:presales@example.com">presales@example.com</a>' in html
    # The customer's input stays in the form.
    for name, value in (("name", "Ada Muster"), ("email", "ada@example.com")):
        assert re.search(rf'<input[^>]*name="{name}"[^>]*value="{value}"', html)
    assert 'value="Muster &amp; Söhne GmbH"' in html
    assert Inquiry.objects.count() == per_email
    # A colleague behind the same office address is not blocked.
    colleague = request_data(message="One more", email="bob@example.com")
    assert client.post("/quote/", colleague, REMOTE_ADDR="192.0.2.1").status_code == 303
    assert Inquiry.objects.count() == per_email + 1


def test_rate_limit_per_client_address_is_higher(client: Client, settings: Any) -> None:
    # A lower bound than the default of 50 keeps the test short; the rule is the same.
    settings.INQUIRY_RATE_LIMITS = {**rate_limits(), "per_address": 3}
    address = {"REMOTE_ADDR": "192.0.2.5"}
    for n in range(3):
        data = request_data(email=f"user{n}@example.com")
        assert client.post("/quote/", data, **address).status_code == 303
    data = request_data(email="user9@example.com")
    assert client.post("/quote/", data, **address).status_code == 429
    assert client.post("/quote/", data, REMOTE_ADDR="192.0.2.6").status_code == 303
    assert Inquiry.objects.count() == 4


def test_behind_a_trusted_proxy_the_forwarded_address_counts(client: Client, settings: Any) -> None:
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    settings.INQUIRY_RATE_LIMITS = {**rate_limits(), "per_address": 1}
    proxy = {"REMOTE_ADDR": "10.0.0.2"}
    first = request_data(email="a@example.com")
    second = request_data(email="b@example.com")
    forwarded = {"X-Forwarded-For": "203.0.113.7, 10.0.0.9"}
    assert client.post("/quote/", first, **proxy, headers=forwarded).status_code == 303
    # Another customer behind the same proxy is not that client.
    other = {"X-Forwarded-For": "203.0.113.8"}
    assert client.post("/quote/", second, **proxy, headers=other).status_code == 303
    again = request_data(email="c@example.com")
    assert client.post("/quote/", again, **proxy, headers=forwarded).status_code == 429
    # An untrusted sender's X-Forwarded-For is ignored: its own address counts.
    spoof = {"X-Forwarded-For": "198.51.100.1"}
    fresh = request_data(email="d@example.com")
    assert client.post("/quote/", fresh, REMOTE_ADDR="192.0.2.77", headers=spoof).status_code == 303
    assert client.post("/quote/", again, REMOTE_ADDR="192.0.2.77", headers=spoof).status_code == 429


def test_failed_submissions_do_not_use_up_the_limit(client: Client) -> None:
    # QA report (issue 5 follow-up): 1 valid and 4 failed submissions blocked the sixth.
    address = {"REMOTE_ADDR": "192.0.2.3"}
    assert client.post("/quote/", request_data(), **address).status_code == 303
    for _ in range(4):
        failed = client.post("/quote/", request_data(email="ada@"), **address, headers=EN)
        assert failed.status_code == 400
        # The error keeps what the customer typed.
        assert 'value="Ada Muster"' in failed.content.decode()
    fixed = client.post("/quote/", request_data(message="Second site"), **address)
    assert fixed.status_code == 303
    assert Inquiry.objects.count() == 2


def test_endless_failed_submissions_are_stopped(client: Client, settings: Any) -> None:
    # settings.INQUIRY_RATE_LIMITS["attempts_per_address"] submissions of any kind per
    # address and hour (lowered from 100 to keep the test short).
    settings.INQUIRY_RATE_LIMITS = {**rate_limits(), "attempts_per_address": 10}
    address = {"REMOTE_ADDR": "192.0.2.4"}
    for _ in range(10):
        assert client.post("/quote/", request_data(name=""), **address).status_code == 400
    assert client.post("/quote/", request_data(), **address).status_code == 429
    assert not Inquiry.objects.exists()


def test_identical_resubmission_shows_the_first_reference(
    client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        first = client.post("/quote/", request_data(), headers=EN)
        again = client.post("/quote/", request_data(email="ADA@example.com"), headers=EN)
    assert first.status_code == again.status_code == 303
    inquiry = Inquiry.objects.get()
    thanks = client.get("/quote/thanks/", headers=EN).content.decode()
    assert str(inquiry.reference) in thanks and "did not store it again" in thanks
    assert len(mail.outbox) == 2  # one mail to presales, one to the customer
    # A different message is a new request.
    assert client.post("/quote/", request_data(message="Other site")).status_code == 303
    assert Inquiry.objects.count() == 2


def test_identical_submission_after_the_window_is_stored_again(client: Client) -> None:
    client.post("/quote/", request_data())
    earlier = Inquiry.objects.get()
    # The first one arrived longer ago than services.DUPLICATE_WINDOW.
    Inquiry.objects.filter(pk=earlier.pk).update(
        received_at=earlier.received_at - DUPLICATE_WINDOW - timedelta(seconds=1)
    )
    assert client.post("/quote/", request_data()).status_code == 303
    assert Inquiry.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_parallel_identical_submissions_store_one_inquiry() -> None:
    if connection.vendor != "postgresql":
        ci_requires("DATABASE_URL (PostgreSQL; SQLite serialises all writes)")
    parallel = 3  # QA report: 3 parallel identical submissions stored 3 inquiries
    barrier = threading.Barrier(parallel)
    statuses: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def submit() -> None:
        try:
            barrier.wait(timeout=30)
            status = Client().post("/quote/", request_data()).status_code
            with lock:
                statuses.append(status)
        except BaseException as exc:  # collected and reported by the main thread
            with lock:
                errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=submit) for _ in range(parallel)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert statuses == [303] * parallel
    assert Inquiry.objects.count() == 1


def test_csrf_is_enforced() -> None:
    client = Client(enforce_csrf_checks=True)
    assert client.post("/quote/", request_data()).status_code == 403
    assert not Inquiry.objects.exists()


def test_references_are_distinct(client: Client) -> None:
    client.post("/quote/", request_data())
    client.post("/quote/", request_data(email="bob@example.com"))
    references = list(Inquiry.objects.values_list("reference", flat=True))
    assert len(set(references)) == 2


def test_german_customer_gets_german_mail(
    client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/quote/", request_data(), headers={"Accept-Language": "de"})
    inquiry = Inquiry.objects.get()
    customer = next(m for m in mail.outbox if list(m.to) == ["ada@example.com"])
    assert inquiry.language == "de"
    assert customer.subject == f"Ihre Angebotsanfrage {inquiry.reference}"


def test_plain_text_mails_are_not_html_escaped(
    client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    # QA report: "Müller & Söhne KG" came out as "Müller &amp; Söhne KG" in the subject.
    data = request_data(company="Müller & Söhne KG", name="Jo <Ops>")
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/quote/", data, headers={"Accept-Language": "de"})
    inquiry = Inquiry.objects.get()
    presales = next(m for m in mail.outbox if list(m.to) == ["presales@example.com"])
    assert presales.subject == f"Neue Anfrage {inquiry.reference} von Müller & Söhne KG"
    assert "Firma: Müller & Söhne KG" in presales.body and "Name: Jo <Ops>" in presales.body
    assert all("&amp;" not in m.subject + m.body for m in mail.outbox)


@pytest.mark.parametrize(
    ("phone", "message", "absent", "present"),
    [
        ("", "", ["Telefon", "Nachricht:"], []),
        ("+49 30 1234", "Zwei Standorte.", [], ["Telefon (optional): +49 30 1234", "Nachricht:"]),
    ],
)
def test_presales_mail_leaves_out_empty_optional_lines(
    client: Client,
    django_capture_on_commit_callbacks: Any,
    phone: str,
    message: str,
    absent: list[str],
    present: list[str],
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            "/quote/", request_data(phone=phone, message=message), headers={"Accept-Language": "de"}
        )
    presales = next(m for m in mail.outbox if list(m.to) == ["presales@example.com"])
    for line in absent:
        assert line not in presales.body
    for line in present:
        assert line in presales.body
    for m in mail.outbox:  # real plurals, "Replikat" for a replica
        assert not any(w in m.body for w in ("(s)", "(en)", "(e)", "Replik ", "Repliken"))


def test_thanks_without_a_request_goes_back_to_the_configurator(client: Client) -> None:
    response = client.get("/quote/thanks/")
    assert response.status_code == 302 and response["Location"] == "/"


def test_form_links_the_privacy_notice(client: Client) -> None:
    page = client.get("/", headers=EN).content.decode()
    assert 'href="/privacy/"' in page and 'name="consent"' in page
    privacy = client.get("/privacy/", headers=EN)
    assert privacy.status_code == 200 and "Privacy notice" in privacy.content.decode()
