"""The presales workspace: queue, quote drafts with alternatives, editing, issuing."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from configurator.catalog.models import Price
from configurator.inquiries.models import Inquiry
from configurator.quotes.models import Quote, QuoteLine, QuoteNumberCounter
from configurator.quotes.services import quote_create_from_inquiry, quote_issue
from tests.quote_factories import make_inquiry, make_presales

pytestmark = pytest.mark.django_db


@pytest.fixture
def presales(client: Client) -> Client:
    """A signed-in presales user whose browser asks for English pages."""
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    client.force_login(make_presales())
    return client


def test_queue_needs_a_staff_login(client: Client) -> None:
    url = reverse("quotes:queue")
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(get_user_model().objects.create_user("customer", password="x"))
    assert client.get(url).status_code == 302


def test_login_page_leads_to_the_queue(client: Client) -> None:
    make_presales()
    page = client.get(reverse("login"))
    assert page.status_code == 200 and b'action="/accounts/login/"' in page.content
    response = client.post(
        reverse("login"), {"username": "presales", "password": "pw-for-tests-only"}
    )
    assert response.status_code == 302 and response["Location"] == reverse("quotes:queue")


def test_queue_sorted_by_due_time_with_overdue_highlighted(presales: Client) -> None:
    old = make_inquiry(company="Old GmbH")
    fresh = make_inquiry(company="Fresh GmbH")
    done = make_inquiry(company="Done KG")
    now = timezone.now()
    Inquiry.objects.filter(pk=old.pk).update(received_at=now - dt.timedelta(days=7))
    Inquiry.objects.filter(pk=fresh.pk).update(received_at=now)
    Inquiry.objects.filter(pk=done.pk).update(
        received_at=now - dt.timedelta(days=8), status=Inquiry.Status.WON
    )
    page = presales.get(reverse("quotes:queue"))
    html = page.content.decode()
    assert page.status_code == 200
    # Open inquiries only by default; the week-old one is due first and overdue.
    assert "Done KG" not in html
    assert html.index("Old GmbH") < html.index("Fresh GmbH")
    old_row = html[html.rindex("<tr", 0, html.index("Old GmbH")) : html.index("Old GmbH")]
    assert 'class="overdue"' in old_row
    fresh_row = html[html.rindex("<tr", 0, html.index("Fresh GmbH")) : html.index("Fresh GmbH")]
    assert 'class="overdue"' not in fresh_row
    everything = presales.get(reverse("quotes:queue"), {"status": "all"}).content.decode()
    assert "Done KG" in everything
    won = presales.get(reverse("quotes:queue"), {"status": "won"}).content.decode()
    assert "Done KG" in won and "Old GmbH" not in won


def test_inquiry_status_can_be_set(presales: Client) -> None:
    inquiry = make_inquiry()
    url = reverse("quotes:inquiry_status", args=[inquiry.pk])
    assert presales.post(url, {"status": "lost"}).status_code == 302
    inquiry.refresh_from_db()
    assert inquiry.status == Inquiry.Status.LOST
    assert presales.post(url, {"status": "bogus"}).status_code == 400
    inquiry.refresh_from_db()
    assert inquiry.status == Inquiry.Status.LOST


def test_draft_from_inquiry_has_priced_alternatives_side_by_side(presales: Client) -> None:
    inquiry = make_inquiry()
    response = presales.post(reverse("quotes:create", args=[inquiry.pk]))
    quote = Quote.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "quotes:detail", args=[quote.pk]
    )
    inquiry.refresh_from_db()
    assert inquiry.status == Inquiry.Status.IN_PROGRESS
    alts = list(quote.alternatives.all())
    # Requested, the other GPU of the pair, the other cache precision, without NVMe.
    assert [a.inputs["gpu"] for a in alts] == [
        "rtx-pro-6000-se",
        "h200-nvl",
        "rtx-pro-6000-se",
        "rtx-pro-6000-se",
    ]
    assert [a.inputs["kv_dtype"] for a in alts] == ["fp8", "fp8", "auto", "fp8"]
    # The customer's 2,000 new conversations a day are kept; the tier alone is off.
    assert (alts[3].inputs["new_conversations_per_day"], alts[3].inputs["without_nvme_tier"]) == (
        2000,
        True,
    )
    # Seed: FP8 → 24 × 48 GB; 16-bit → 24 × 64 GB; prices from demo_prices.csv.
    dimm = alts[0].lines.get(category="dimm")
    assert (dimm.quantity, dimm.unit_price_eur) == (24, Decimal("245.00"))
    assert alts[2].lines.get(category="dimm").sku == "DIMM-DDR5-64GB"
    assert not alts[3].lines.filter(category="nvme").exists()
    page = presales.get(response["Location"]).content.decode()
    for alt in alts:
        assert f'id="alt-{alt.pk}"' in page
    assert "Margin (staff only)" in page
    # Seed example at demo prices (demo_prices.csv × BOM quantities): 66,910.00 net.
    assert "€66,910.00" in page


def test_quantity_change_over_htmx_returns_the_alternative_only(presales: Client) -> None:
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    line = QuoteLine.objects.get(alternative__position=0, category="gpu")
    url = reverse("quotes:line_quantity", args=[line.pk])
    response = presales.post(url, {"quantity": "5"}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith("<article") and "<html" not in body
    line.refresh_from_db()
    assert line.quantity == 5
    # One more GPU at 8,900.00 (demo_prices.csv): 66,910.00 + 8,900.00 net.
    assert "€75,810.00" in body
    bad = presales.post(url, {"quantity": "-1"}, HTTP_HX_REQUEST="true")
    assert bad.status_code == 400 and 'role="alert"' in bad.content.decode()
    line.refresh_from_db()
    assert line.quantity == 5
    # Without htmx the form posts and redirects back to the editor; 0 removes the line
    # once the removal is confirmed (tests/web/test_quotes_deviations.py covers the refusal).
    plain = presales.post(url, {"quantity": "0", "confirm_remove": "1"})
    assert plain.status_code == 302
    assert not QuoteLine.objects.filter(pk=line.pk).exists()
    assert quote.alternatives.count() == 4


@pytest.mark.parametrize(
    ("language", "limit"), [("en", "less than or equal to 10,000."), ("de", "gleich 10.000 sein.")]
)
def test_a_quantity_above_the_limit_quotes_the_limit_grouped(
    presales: Client, language: str, limit: str
) -> None:
    # 10,000: configurator.quotes.forms.MAX_QUANTITY, the most of one item on a quote.
    quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    line = QuoteLine.objects.get(alternative__position=0, category="gpu")
    url = reverse("quotes:line_quantity", args=[line.pk])
    response = presales.post(
        url, {"quantity": "10001"}, HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE=language
    )
    assert response.status_code == 400
    assert limit in response.content.decode()


def test_the_editors_labels_begin_with_a_capital(presales: Client) -> None:
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    page = presales.get(reverse("quotes:detail", args=[quote.pk])).content.decode()
    labels = re.findall(r"<label [^>]*>([^<]+)</label>", page)
    assert '<label for="id_notes">Notes for the customer:</label>' in page
    assert labels and all(label.strip()[0].isupper() for label in labels), labels


def test_add_line_and_discount_change_the_totals(presales: Client) -> None:
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    alt = quote.alternatives.get(position=0)
    response = presales.post(
        reverse("quotes:line_add", args=[alt.pk]), {"sku": "NIC-2X100GBE", "quantity": "1"}
    )
    assert response.status_code == 302
    added = alt.lines.get(is_manual=True)
    assert (added.sku, added.unit_price_eur) == ("NIC-2X100GBE", Decimal("890.00"))
    unknown = presales.post(
        reverse("quotes:line_add", args=[alt.pk]), {"sku": "NOPE", "quantity": "1"}
    )
    assert unknown.status_code == 400
    assert alt.lines.count() == 13  # 12 BOM lines (tests/sizing/test_bom.py seed) + 1 added
    settings_url = reverse("quotes:settings", args=[quote.pk])
    bad = presales.post(settings_url, {"discount_percent": "120", "language": "en", "notes": ""})
    assert bad.status_code == 400
    presales.post(settings_url, {"discount_percent": "10", "language": "en", "notes": ""})
    quote.refresh_from_db()
    totals = alt.totals(discount_percent=quote.discount_percent, vat_rate=Decimal("0.19"))
    # 66,910.00 + 890.00 = 67,800.00; 10 % off = 61,020.00; VAT 19 % = 11,593.80.
    assert totals["subtotal"] == Decimal("67800.00")
    assert totals["net"] == Decimal("61020.00")
    assert totals["vat"] == Decimal("11593.80")
    assert totals["gross"] == Decimal("72613.80")


def test_issue_numbers_per_year_and_freezes_the_quote(presales: Client) -> None:
    inquiry = make_inquiry()
    first = quote_create_from_inquiry(inquiry=inquiry, user=None)
    second = quote_create_from_inquiry(inquiry=inquiry, user=None)
    response = presales.post(reverse("quotes:issue", args=[first.pk]))
    assert response.status_code == 302
    first.refresh_from_db()
    year = timezone.localdate().year
    assert first.number == f"Q-{year}-0001"
    assert first.snapshot is not None and first.engine_version.startswith("sizing ")
    assert first.valid_until == timezone.localdate(first.issued_at) + dt.timedelta(days=30)
    inquiry.refresh_from_db()
    assert inquiry.status == Inquiry.Status.QUOTED
    issued_again = quote_issue(quote=first)
    assert issued_again.number == first.number  # idempotent
    second = quote_issue(quote=second)
    assert second.number == f"Q-{year}-0002"
    # Frozen: edits are refused and change nothing.
    line = first.alternatives.get(position=0).lines.get(category="gpu")
    refused = presales.post(reverse("quotes:line_quantity", args=[line.pk]), {"quantity": "9"})
    assert refused.status_code == 409
    line.refresh_from_db()
    assert line.quantity == 4
    settings_url = reverse("quotes:settings", args=[first.pk])
    assert (
        presales.post(settings_url, {"discount_percent": "5", "language": "en"}).status_code == 409
    )


def test_next_year_starts_again_at_one() -> None:
    make_presales()
    inquiry = make_inquiry()
    a = quote_create_from_inquiry(inquiry=inquiry, user=None)
    b = quote_create_from_inquiry(inquiry=inquiry, user=None)
    tz = timezone.get_current_timezone()
    assert quote_issue(quote=a, now=dt.datetime(2026, 12, 31, 12, tzinfo=tz)).number == (
        "Q-2026-0001"
    )
    assert quote_issue(quote=b, now=dt.datetime(2027, 1, 4, 9, tzinfo=tz)).number == "Q-2027-0001"


def test_price_changes_after_issue_do_not_change_the_snapshot() -> None:
    make_presales()
    quote = quote_issue(quote=quote_create_from_inquiry(inquiry=make_inquiry(), user=None))
    before = dict(quote.snapshot or {})
    Price.objects.filter(sku="DIMM-DDR5-48GB").update(unit_price_eur=Decimal("999.00"))
    quote.refresh_from_db()
    assert quote.snapshot == before
    # demo_prices.csv: 245.00 EUR per 48 GB DIMM at issue time.
    dimm = next(ln for ln in before["alternatives"][0]["lines"] if ln["category"] == "dimm")
    assert dimm["unit_price_eur"] == "245.00"


def test_unsizable_inquiry_stores_no_quote(presales: Client) -> None:
    inquiry = make_inquiry()
    Inquiry.objects.filter(pk=inquiry.pk).update(model="nobody/unknown-model")
    response = presales.post(reverse("quotes:create", args=[inquiry.pk]))
    assert response.status_code == 302
    assert not Quote.objects.exists()


def test_issuing_twice_redirects_to_the_issued_quote_with_a_message(presales: Client) -> None:
    # Issue 6 QA: a double click on "Issue quote" sent two POSTs; the second must not fail.
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    url = reverse("quotes:issue", args=[quote.pk])
    detail = reverse("quotes:detail", args=[quote.pk])
    first = presales.post(url)
    assert first.status_code == 302 and first["Location"] == detail
    quote.refresh_from_db()
    number, snapshot = quote.number, quote.snapshot
    second = presales.post(url, follow=True)
    assert second.redirect_chain == [(detail, 302)] and second.status_code == 200
    assert f"Quote {number} had already been issued; it is unchanged." in second.content.decode()
    quote.refresh_from_db()
    assert (quote.number, quote.snapshot) == (number, snapshot)
    year = timezone.localdate().year
    assert QuoteNumberCounter.objects.get(year=year).last_number == 1  # no number used up


def test_editor_shows_the_quote_language_not_the_drafts(presales: Client) -> None:
    # A German inquiry drafted in German, then switched to English: every text follows.
    quote = quote_create_from_inquiry(inquiry=make_inquiry(language="de"), user=None)
    presales.post(
        reverse("quotes:settings", args=[quote.pk]),
        {"discount_percent": "0", "language": "en", "notes": ""},
    )
    page = presales.get(reverse("quotes:detail", args=[quote.pk])).content.decode()
    # Labels from configurator/quotes/pricing.py; item names from demo_prices.csv.
    assert "FP8 cache, with NVMe tier" in page and "4U GPU server" in page
    assert "mit NVMe-Stufe" not in page and "4HE-GPU-Server" not in page
    assert "one per socket" in page and "eine je Sockel" not in page  # sizing/bom/lines.py reasons


def test_each_alternatives_title_and_summary_line_share_the_quote_language(
    presales: Client,
) -> None:
    # A German quote seen by presales with an English interface: the alternative's title
    # (label_in) and its summary line below it are both German (configurator/locale/de).
    quote = quote_create_from_inquiry(inquiry=make_inquiry(language="de"), user=None)
    page = presales.get(
        reverse("quotes:detail", args=[quote.pk]), headers={"Accept-Language": "en"}
    ).content.decode()
    line = re.search(r'<p class="plan-figures">(.*?)</p>', page, re.S)
    assert line, "no summary line"
    assert "Gespräche auf den GPUs" in line.group(1) and "CPU-Speicherstufe" in line.group(1)
    assert "conversations on the GPUs" not in line.group(1)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("quotes:queue", []),
        ("quotes:detail", [1]),
        ("quotes:pdf", [1]),
        ("deployments:quote_bundle", [1]),  # linked from the quote page
    ],
)
def test_anonymous_staff_pages_send_to_the_site_login(
    client: Client, name: str, args: list[int]
) -> None:
    # Issue 6 QA: the bundle link sent anonymous users to /admin/login/; the site's login
    # page is settings.LOGIN_URL (/accounts/login/).
    response = client.get(reverse(name, args=args))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
