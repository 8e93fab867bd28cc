"""Verification reports stored as a foreign key load as their quote's one-to-one report.

Migration ``verification.0005`` turns ``VerificationReport.quote`` from a foreign key
with a unique constraint into a one-to-one field: every stored report, with its checks,
stays its quote's report, a quote without one still has none, and a second report for
the same quote is refused.
"""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("verification", "0004_record_sources_by_title"), ("quotes", "0003_quote_pdf")]
AFTER = [("verification", "0005_report_one_to_one_quote")]


@pytest.mark.django_db(transaction=True)
def test_reports_written_as_foreign_keys_stay_their_quotes_reports() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    quote_model = old.get_model("quotes", "Quote")
    verified = quote_model.objects.create(customer_name="Ada", language="en")
    unverified = quote_model.objects.create(customer_name="Grace", language="de")
    report = old.get_model("verification", "VerificationReport").objects.create(
        quote=verified,
        status="verified",
        summary="1 check, all verified",
        summaries={"en": "1 check, all verified", "de": "1 Prüfung, alle bestätigt"},
        runs=2,
    )
    old.get_model("verification", "VerificationCheck").objects.create(
        report=report,
        position=0,
        alternative="A",
        name="KV pool per GPU",
        quantity="kv_cache_gib",
        unit="GiB",
        predicted=20.0,
        measured=20.1,
        deviation=-0.005,
        tolerance=0.05,
        status="verified",
    )

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    quotes = new.get_model("quotes", "Quote").objects
    row = quotes.get(pk=verified.pk).verification_report
    assert (row.pk, row.status, row.runs, row.summaries["de"]) == (
        report.pk,
        "verified",
        2,
        "1 Prüfung, alle bestätigt",
    )
    assert [c.name for c in row.checks.all()] == ["KV pool per GPU"]
    assert not new.get_model("verification", "VerificationReport").objects.filter(
        quote_id=unverified.pk
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        new.get_model("verification", "VerificationReport").objects.create(
            quote=quotes.get(pk=verified.pk), status="pending"
        )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    from configurator.quotes.models import Quote

    assert Quote.objects.get(pk=verified.pk).verification_report.summary_in("de") == (
        "1 Prüfung, alle bestätigt"
    )
