"""Quote numbers are gapless per year also when many people issue at once (PostgreSQL)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from configurator.quotes.models import Quote
from configurator.quotes.services import quote_issue
from tests.conftest import ci_requires

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
