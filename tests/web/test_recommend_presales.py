"""Presales start a quote from a recommended configuration; the others become alternatives."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from configurator.inquiries.models import Inquiry
from configurator.quotes.models import Quote
from tests.quote_factories import make_inquiry

pytestmark = pytest.mark.django_db


def _choices(html: str) -> list[dict[str, str]]:
    forms = re.findall(
        r'<form method="post" action="[^"]*/quote/recommended/">(.*?)</form>', html, re.S
    )
    return [dict(re.findall(r'name="(\w+)" value="([^"]*)"', f)) for f in forms]


def test_inquiry_page_lists_recommendations_with_a_button_each(presales: Client) -> None:
    inquiry = make_inquiry()
    html = presales.get(reverse("quotes:inquiry", args=[inquiry.pk])).content.decode()
    assert "Recommended configurations" in html
    choices = _choices(html)
    assert len(choices) == 3
    # The seed's own layout at demo prices (demo_prices.csv): 66,910.00 EUR net.
    assert "The requested layout costs €66,910.00 net." in html


def test_quote_from_the_second_recommendation_keeps_the_others_as_alternatives(
    presales: Client,
) -> None:
    inquiry = make_inquiry()
    html = presales.get(reverse("quotes:inquiry", args=[inquiry.pk])).content.decode()
    choices = _choices(html)
    chosen = choices[1]
    chosen.pop("csrfmiddlewaretoken", None)
    response = presales.post(reverse("quotes:create_recommended", args=[inquiry.pk]), chosen)
    quote = Quote.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("quotes:detail", args=[quote.pk])
    alts = list(quote.alternatives.all())
    keys = ("gpu", "gpus_per_node", "kv_dtype", "new_conversations_per_day")
    got = [tuple(str(a.inputs[k]) for k in keys) for a in alts]
    want = [
        tuple(c[k] for k in ("gpu", "gpus_per_node", "kv_dtype", "new_conversations_per_day"))
        for c in choices
    ]
    # The chosen one first, then the other two recommended ones, cheapest first.
    assert got == [want[1], want[0], want[2]]
    # Every alternative is a card the 4U server takes (hardware.json ``chassis``): the
    # flow-through Workstation Edition, cheapest per card at demo prices, is none of them.
    assert all(a.inputs["gpu"] != "rtx-pro-6000-ws" for a in alts)
    # Each alternative is the recommended BOM, priced from the same list: the quote's
    # subtotal of the chosen one is what the recommendation showed.
    totals = alts[0].totals(discount_percent=Decimal(0), vat_rate=Decimal("0.19"))
    assert f"€{totals['subtotal']:,.2f}" in html
    inquiry.refresh_from_db()
    assert inquiry.status == Inquiry.Status.IN_PROGRESS


def test_bad_choice_stores_nothing(presales: Client) -> None:
    inquiry = make_inquiry()
    url = reverse("quotes:create_recommended", args=[inquiry.pk])
    bad = {
        "gpu": "gtx-1080",
        "gpus_per_node": "4",
        "kv_dtype": "fp8",
        "new_conversations_per_day": "0",
    }
    response = presales.post(url, bad)
    assert response.status_code == 302 and not Quote.objects.exists()
    # 16 GPUs per node are beyond the chassis's 8 GPU slots (sizing/bom/lines.py): a message, no
    # draft.
    response = presales.post(url, {**bad, "gpu": "rtx-pro-6000-se", "gpus_per_node": "16"})
    assert response.status_code == 302 and not Quote.objects.exists()
    # The Workstation Edition's flow-through cooler does not go into the 4U server
    # (sizing/bom/lines.py check_gpu_cooling): a message, no draft.
    response = presales.post(url, {**bad, "gpu": "rtx-pro-6000-ws"})
    assert response.status_code == 302 and not Quote.objects.exists()


def test_inquiry_page_shows_the_shared_tier_of_each_recommendation(presales: Client) -> None:
    # The seed workload's second cheapest (tests/web/test_recommend.py) is the cheapest's
    # layout with a shared tier of every user once (500 × 2^30 B = 0.54 TB) that holds the
    # 500 - 134 on the GPUs - 178 in the CPU tier = 188 conversations the cheapest
    # recomputes.
    inquiry = make_inquiry()
    html = presales.get(reverse("quotes:inquiry", args=[inquiry.pk])).content.decode()
    table = re.search(r'<table class="lines">(.*?)</table>', html, re.S)
    assert table is not None
    head = re.search(r"<thead>(.*?)</thead>", table.group(1), re.S)
    assert head is not None and "<th>Shared tier</th>" in head.group(1)
    rows = re.findall(r"<tr>\s*(<td>.*?)</tr>", table.group(1), re.S)
    cells = [re.findall(r"<td>(.*?)</td>", row, re.S) for row in rows]
    assert [c[3] for c in cells[:2]] == ["–", "0.5 TB"]
    assert cells[0][:3] == cells[1][:3]  # the same GPUs, DIMMs and NVMe
    assert "a shared tier of 0.5 TB (NFS/pNFS or S3) holds the other 188" in cells[1][5]


def test_quote_from_a_recommendation_without_nvme_keeps_the_new_conversations(
    presales: Client,
) -> None:
    # The seed inquiry asks for 2,000 new conversations a day (tests/quote_factories.py);
    # its cheapest recommendation has no NVMe tier (manage.py recommend on the seed).
    inquiry = make_inquiry()
    assert inquiry.new_conversations_per_day == 2000
    html = presales.get(reverse("quotes:inquiry", args=[inquiry.pk])).content.decode()
    off = [c for c in _choices(html) if c.get("without_nvme_tier") == "on"]
    assert off and all(c["new_conversations_per_day"] == "2000" for c in off)
    chosen = off[0]
    chosen.pop("csrfmiddlewaretoken", None)
    presales.post(reverse("quotes:create_recommended", args=[inquiry.pk]), chosen)
    first = Quote.objects.get().alternatives.get(position=0)
    assert (first.inputs["new_conversations_per_day"], first.inputs["without_nvme_tier"]) == (
        2000,
        True,
    )
    assert not first.lines.filter(category="nvme").exists()
