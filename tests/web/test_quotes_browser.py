"""The quote editor in a real headless Chromium at desktop and phone widths.

Issue 6 QA: at 1400 px the BOM tables overflowed their cards and the Total and Margin
columns of alternative 1 lay over alternative 2. The page is measured in the browser
and screenshots go to test-artifacts/quote-editor-<width>.png.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from configurator.quotes.services import quote_create_from_inquiry
from tests.conftest import ci_requires
from tests.quote_factories import make_inquiry, make_presales

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

MEASURE = """() => {
  const box = (el) => el.getBoundingClientRect();
  const cards = [...document.querySelectorAll("article.alternative")].map((card) => {
    const c = box(card);
    const scrollers = [...card.querySelectorAll(".table-scroll")].map((s) => {
      const r = box(s);
      return {left: r.left, right: r.right};
    });
    const cells = [...card.querySelectorAll("td.money, th")].map((cell) => {
      const r = box(cell);
      // What the user sees at the cell's centre: the cell itself or something above it.
      const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
      const y = r.top + r.height / 2;
      const hit = document.elementFromPoint(x, y);
      const visible = r.right <= c.right + 0.5 && r.left >= c.left - 0.5;
      return {visible, own: !visible || (hit !== null && card.contains(hit))};
    });
    return {left: c.left, right: c.right, top: c.top, bottom: c.bottom, scrollers, cells};
  });
  return {cards, pageWidth: document.documentElement.scrollWidth, viewport: innerWidth};
}"""


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    path = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    if not Path(path).exists():
        ci_requires(f"Chromium at {path}")
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def open_editor(
    browser: Any, live_server: Any, quote_pk: int, *, width: int, locale: str
) -> tuple[Any, Any]:
    """A browser context signed in as presales and its page on the quote's editor."""
    context = browser.new_context(locale=locale, viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(f"{live_server.url}{reverse('login')}")
    page.fill("input[name=username]", "presales")
    page.fill("input[name=password]", "pw-for-tests-only")
    page.press("input[name=password]", "Enter")
    page.wait_for_url("**/presales/**")
    page.goto(f"{live_server.url}{reverse('quotes:detail', args=[quote_pk])}")
    return context, page


@pytest.mark.parametrize("width", [1400, 390])
def test_alternatives_stay_inside_their_cards(browser: Any, live_server: Any, width: int) -> None:
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(language="de"), user=None)
    context, page = open_editor(browser, live_server, quote.pk, width=width, locale="en-GB")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"quote-editor-{width}.png"), full_page=True)
    # The whole page in the viewport, so every cell can be hit-tested where it lies.
    height = page.evaluate("document.documentElement.scrollHeight")
    page.set_viewport_size({"width": width, "height": height})
    m = page.evaluate(MEASURE)
    context.close()
    assert len(m["cards"]) == 4  # seed inquiry: four alternatives (tests/web/test_quotes.py)
    assert m["pageWidth"] <= m["viewport"]  # no sideways scrolling of the whole page
    for card in m["cards"]:
        for scroller in card["scrollers"]:  # a wide table scrolls inside its own card
            assert (
                card["left"] - 0.5 <= scroller["left"] <= scroller["right"] <= card["right"] + 0.5
            )
        assert all(cell["own"] for cell in card["cells"])  # nothing of it lies over another
    cards = m["cards"]
    for a, b in pairwise(cards):
        same_row = a["top"] < b["bottom"] and b["top"] < a["bottom"]
        assert not same_row or a["right"] <= b["left"]


EDITOR_BOXES = """() => {
  const box = (selector) => document.querySelector(selector).getBoundingClientRect();
  return {issue: box("form.issue button").height, verify: box(".actions form button").height,
          discount: box("#id_discount_percent").width, form: box("form.settings").width};
}"""


@pytest.mark.parametrize("width", [1400, 390])
def test_the_editors_buttons_keep_one_line_and_the_discount_is_a_short_input(
    browser: Any, live_server: Any, width: int
) -> None:
    # Product review: "Angebot ausstellen" wrapped onto two lines at phone width, the
    # discount took the full width.
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    context, page = open_editor(browser, live_server, quote.pk, width=width, locale="de-DE")
    boxes = page.evaluate(EDITOR_BOXES)
    context.close()
    assert boxes["issue"] <= boxes["verify"] + 0.5  # the same one-line height as "Prüfen"
    assert boxes["discount"] < min(200, boxes["form"] / 2)
