"""Quote numbers are gapless per year also when many people issue at once (PostgreSQL)."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from configurator.quotes.models import Quote, QuoteNumberCounter
from configurator.quotes.services import quote_create_from_inquiry, quote_issue
from tests.conftest import ci_requires
from tests.quote_factories import make_inquiry, make_presales

PARALLEL = 20
"""Issue 6 target: issuing 20 quotes concurrently yields 20 distinct consecutive numbers."""


@pytest.mark.django_db(transaction=True)
def test_twenty_parallel_issues_get_twenty_consecutive_numbers() -> None:
    if connection.vendor != "postgresql":
        ci_requires("DATABASE_URL (PostgreSQL; SQLite serialises all writes)")
    drafts = [Quote.objects.create(customer_name=f"Customer {n}") for n in range(PARALLEL)]
    barrier = threading.Barrier(PARALLEL)
    numbers: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def issue(quote: Quote) -> None:
        try:
            barrier.wait(timeout=30)
            issued = quote_issue(quote=quote)
            with lock:
                numbers.append(str(issued.number))
        except BaseException as exc:  # collected and reported by the main thread
            with lock:
                errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=issue, args=(q,)) for q in drafts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    year = Quote.objects.get(pk=drafts[0].pk).issued_at.year  # type: ignore[union-attr]
    assert sorted(numbers) == [f"Q-{year}-{n:04d}" for n in range(1, PARALLEL + 1)]
    assert Quote.objects.filter(number__isnull=False).count() == PARALLEL


@pytest.mark.django_db(transaction=True)
def test_double_submit_of_issue_issues_once_and_answers_both() -> None:
    # Issue 6 QA: two parallel POSTs to /presales/quotes/N/issue/ (a double click) gave
    # one 500. Both must land on the issued quote; one number is used.
    if connection.vendor != "postgresql":
        ci_requires("DATABASE_URL (PostgreSQL; SQLite serialises all writes)")
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    url = reverse("quotes:issue", args=[quote.pk])
    barrier = threading.Barrier(2)
    statuses: list[tuple[int, str]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def submit() -> None:
        try:
            client = Client()
            client.force_login(get_user_model().objects.get(username="presales"))
            barrier.wait(timeout=30)
            response = client.post(url)
            with lock:
                statuses.append((response.status_code, response["Location"]))
        except BaseException as exc:  # collected and reported by the main thread
            with lock:
                errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=submit) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    detail = reverse("quotes:detail", args=[quote.pk])
    assert statuses == [(302, detail), (302, detail)]
    quote.refresh_from_db()
    year = timezone.localdate(quote.issued_at).year
    assert quote.number == f"Q-{year}-0001"
    assert QuoteNumberCounter.objects.get(year=year).last_number == 1
