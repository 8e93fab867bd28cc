"""The configurator in a real headless Chromium: live estimate, quote request, confirmation.

Expected figures are the sizing article's worked example (docs/sizing.md): Qwen/Qwen3-32B-FP8,
8,192 tokens, 500 users, RTX PRO 6000 Blackwell Server Edition, FP8 cache → 51
conversations per GPU and 24 × 48 GB of host memory. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.browser_request import CHROMIUM_ARGS
from configurator.inquiries.models import Inquiry
from tests.conftest import ci_requires

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture
def chromium_path() -> str:
    """The Chromium binary (``CHROMIUM_PATH`` or Debian's ``/usr/bin/chromium``)."""
    path = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    if not Path(path).exists():
        ci_requires(f"Chromium at {path}")
    return path


@pytest.fixture
def page(chromium_path: str, monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[Any]:
    """A German-language browser page; Playwright's loop runs beside Django's ORM."""
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.HF_HUB_OFFLINE = True  # the live server never reaches the Hub
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        context = browser.new_context(locale="de-DE", viewport={"width": 1280, "height": 900})
        yield context.new_page()
        context.close()
        browser.close()


def test_seed_example_updates_live_and_the_quote_request_is_confirmed(
    page: Any, live_server: Any
) -> None:
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(f"{live_server.url}/")
    expect(page.locator("h1")).to_contain_text("Was braucht Ihre LLM-Anwendung?")
    page.evaluate("window.__loadedOnce = true")

    page.locator("#id_model").press_sequentially("Qwen/Qwen3-32B-FP8", delay=5)
    page.locator("#id_context_tokens").fill("")
    page.locator("#id_context_tokens").press_sequentially("8192")
    page.locator("#id_users").fill("")
    page.locator("#id_users").press_sequentially("500")
    page.locator("details.more > summary").click()
    page.locator("#id_gpu").select_option("rtx-pro-6000-se")
    page.locator("#id_kv_dtype").select_option("fp8")
    page.locator("#id_gpus_per_node").fill("4")

    # Seed: 51 conversations per card, 204 on four cards, 24 × 48 GB host memory.
    expect(page.locator("#figure-resident")).to_contain_text("51 pro GPU", timeout=15_000)
    expect(page.locator("#figure-resident .value")).to_have_text("204")
    expect(page.locator("#figure-host")).to_contain_text("24 × 48 GB = 1.152 GB")
    expect(page.locator("#figure-gpus .value")).to_have_text("4 Replikate × 1 GPU")
    assert page.evaluate("window.__loadedOnce") is True  # updated without a reload

    # The address bar carries the inputs: reloading or sharing it keeps the estimate.
    expect(page).to_have_url(re.compile(r"/\?model=Qwen%2FQwen3-32B-FP8&context_tokens=8192"))
    expect(page.locator("#share-url")).to_have_value(re.compile(r"users=500"))

    page.locator("#figure-host summary").click()
    expect(page.locator("#figure-host .calc")).to_contain_text("921 GB")
    # The traffic charts load once they scroll into view: the knee at the plan's
    # 125 GiB per replica (seed: 500 GiB over 4 replicas) and the plan's 500 users.
    page.locator("#share-url").scroll_into_view_if_needed()
    expect(page.locator("svg.traffic-hit polyline.hit-cpu")).to_have_count(1, timeout=15_000)
    expect(page.locator("svg.traffic-users polyline.users-with")).to_have_count(1)
    expect(page.locator("#traffic-charts")).to_have_count(0)
    page.screenshot(path=str(ARTIFACTS / "configurator-estimate.png"), full_page=True)

    page.locator("#id_name").fill("Ada Muster")
    page.locator("#id_company").fill("Muster GmbH")
    page.locator("#id_email").fill("ada@example.com")
    page.locator("#id_message").fill("Bitte mit NVMe-Stufe.")
    page.locator("#id_consent").check()
    page.get_by_role("button", name="Angebotsanfrage senden").click()

    page.wait_for_url(re.compile(r"/quote/thanks/$"))
    reference = page.locator(".reference").inner_text()
    assert re.fullmatch(r"INQ-\d{4}-\d{6}", reference)
    page.screenshot(path=str(ARTIFACTS / "configurator-confirmation.png"), full_page=True)

    inquiry = Inquiry.objects.get(reference=reference)
    assert (inquiry.users, inquiry.context_tokens, inquiry.kv_dtype) == (500, 8192, "fp8")
    assert inquiry.plan_summary["conversations_per_gpu"] == 51  # seed: 51 per card


def test_language_switch_keeps_the_typed_inputs(page: Any, live_server: Any) -> None:
    from playwright.sync_api import expect

    page.goto(f"{live_server.url}/")
    page.locator("#id_model").fill("Qwen/Qwen3-32B-FP8")
    page.locator("#id_users").fill("")
    page.locator("#id_users").press_sequentially("500")
    # Seed: 204 conversations on four cards.
    expect(page.locator("#figure-resident .value")).to_have_text("204", timeout=15_000)
    page.locator("#language-select").select_option("en")  # applies at once with JavaScript
    expect(page.locator("h1")).to_contain_text("What does your LLM workload need?")
    expect(page.locator("#id_model")).to_have_value("Qwen/Qwen3-32B-FP8")
    expect(page.locator("#id_users")).to_have_value("500")
    expect(page.locator("#figure-resident")).to_contain_text("51 per GPU")
    expect(page.locator(".verdict")).to_contain_text("296 of 500 conversations")


def test_language_switch_keeps_an_input_with_its_error(page: Any, live_server: Any) -> None:
    from playwright.sync_api import expect

    page.goto(f"{live_server.url}/")
    page.locator("#id_model").fill("Qwen/Qwen3-32B-FP8")
    page.locator("#id_users").fill("")
    page.locator("#id_users").press_sequentially("2000000")  # over MAX_USERS (sizing/workload.py)
    error = page.locator("#id_users_error")
    expect(error).to_have_text(re.compile(r"\S"), timeout=15_000)
    german = error.inner_text()
    expect(page).to_have_url(re.compile(r"users=2000000"))
    page.locator("#language-select").select_option("en")  # applies at once with JavaScript
    expect(page.locator("h1")).to_contain_text("What does your LLM workload need?")
    expect(page.locator("#id_users")).to_have_value("2000000")
    expect(error).to_have_text(re.compile(r"\S"))
    assert error.inner_text() != german  # the same error, now in English
    expect(page.locator("#figure-resident")).to_have_count(0)


def test_phone_width_shows_the_form_in_one_column(page: Any, live_server: Any) -> None:
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/?model=Qwen/Qwen3-32B-FP8&context_tokens=8192&users=500")
    expect(page.locator("#id_model")).to_be_visible()
    expect(page.locator("#figure-resident .value")).to_have_text("204")  # seed: 204
    # No horizontal scrolling on a 390 px wide phone screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(ARTIFACTS / "configurator-phone.png"), full_page=True)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"


def test_a_config_over_1_mb_shows_its_limit_at_the_upload_field(
    page: Any, live_server: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    big = tmp_path / "config.json"  # 1.5 MB: over the 1 MB limit of docs/customer.md
    big.write_text('{"pad": "' + "x" * 1_500_000 + '"}')
    page.goto(f"{live_server.url}/")
    page.locator("details.private > summary").click()
    page.locator("#id_users").fill("")
    page.locator("#id_users").press_sequentially("321")
    page.locator("#id_config_file").set_input_files(str(big))
    expect(page.locator("#id_config_file_error")).to_contain_text(
        "Die Datei ist größer als 1 MB", timeout=15_000
    )
    expect(page.locator("#id_users")).to_have_value("321")


def test_a_chosen_config_is_uploaded_once_and_the_live_estimate_posts_url_encoded(
    page: Any, live_server: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    # The seed model's config as bundled (sizing/data/models.json): 64 layers, 8 KV heads
    # of 128, FP8 cache: 128 KiB per token, 1 GiB per 8,192-token conversation (DESIGN §3).
    catalog = json.loads((ROOT / "sizing/data/models.json").read_text("utf-8"))
    config = tmp_path / "config.json"
    config.write_text(json.dumps(catalog["models"]["Qwen/Qwen3-32B-FP8"]["config"]))
    posts: list[tuple[str, str]] = []
    page.on(
        "request",
        lambda r: (
            posts.append((r.url, r.headers.get("content-type", ""))) if r.method == "POST" else None
        ),
    )
    page.goto(f"{live_server.url}/")
    page.locator("details.private > summary").click()
    page.locator("#id_model_name").fill("acme/private-32b")
    page.locator("#id_config_file").set_input_files(str(config))
    estimate = page.locator("#estimate")
    expect(estimate).to_contain_text("Privates Modell acme/private-32b", timeout=15_000)
    page.locator("#id_users").fill("")
    page.locator("#id_users").press_sequentially("321")
    expect(page.locator("#figure-resident")).to_be_visible(timeout=15_000)
    expect(estimate).to_contain_text("Privates Modell acme/private-32b")
    page.wait_for_timeout(1_000)  # the last keystroke's estimate has arrived
    uploads = [kind for url, kind in posts if url.endswith("/estimate/upload/")]
    estimates = [kind for url, kind in posts if url.endswith("/estimate/")]
    assert len(uploads) == 1 and uploads[0].startswith("multipart/form-data")
    assert estimates and all(k == "application/x-www-form-urlencoded" for k in estimates)


def test_changing_an_input_clears_the_configurations_found_for_the_old_one(
    page: Any, live_server: Any
) -> None:
    from playwright.sync_api import expect

    from configurator.catalog.services import pricelist_load_demo

    pricelist_load_demo()
    # The seed example (docs/sizing.md): 500 users, 2,000 new conversations per day.
    page.goto(
        f"{live_server.url}/?model=Qwen/Qwen3-32B-FP8&context_tokens=8192&users=500"
        "&new_conversations_per_day=2000"
    )
    expect(page.locator("#figure-resident .value")).to_have_text("204")  # seed: 204
    find = page.get_by_role("button", name="Günstigste Konfigurationen finden")
    find.click()
    links = page.locator("#recommendations a", has_text="Diese Konfiguration übernehmen")
    expect(links.first).to_have_attribute("href", re.compile(r"users=500"), timeout=30_000)

    page.locator("#id_users").fill("")
    page.locator("#id_users").press_sequentially("5000")
    expect(page).to_have_url(re.compile(r"users=5000"), timeout=15_000)
    # The 500-user configurations are gone, a note says why, the button is there again.
    expect(page.locator("#recommendations table.recommended")).to_have_count(0)
    expect(links).to_have_count(0)
    expect(page.locator("#recommendations .stale")).to_contain_text("Die Eingaben haben sich")
    find.click()
    expect(links.first).to_have_attribute("href", re.compile(r"users=5000"), timeout=30_000)
    expect(page.locator("#recommendations .stale")).to_have_count(0)
