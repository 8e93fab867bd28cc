"""The configurator in headless Chromium, in German and in English: the German page's
visible text has no English words but names and units.

A word counts as English when it appears in the English page's visible text and in the
German one: an untranslated message reads the same in both. The allow-list holds the
names, units and technical terms that both languages write alike; the estimate is the
seed example (docs/sizing.md), opened from its share link, with every tier and every
"Show the calculation" block open so their text is visible too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.web.test_browser_configurator import CHROMIUM_ARGS, chromium_path  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "test-artifacts"
SEED_QUERY = {
    "model": "Qwen/Qwen3-32B-FP8",
    "context_tokens": 8192,
    "users": 500,
    "kv_dtype": "fp8",
    "gpu": "rtx-pro-6000-se",
    "gpus_per_node": 4,
    "new_conversations_per_day": 2000,
}
# fmt: off
NAMES = (
    # titles of cited works and catalog names of hardware, kept as published
    "Scaling Laws for Neural Language Models", "Grace Blackwell Ultra",
    "Max-Q Workstation Edition", "Workstation Edition", "Server Edition", "GeForce", "Instinct",
    # the benchmark whose latency bounds are the default targets (sizing/traffic/profile.py)
    "MLPerf Inference",
)
ALLOWED = {
    # names: vendors, engines, models, hardware (A100, L40S, H200 NVL, MI300X), languages
    "qwen", "vllm", "lmcache", "sglang", "hicache", "dynamo", "nvidia", "amd", "epyc",
    "rtx", "pro", "blackwell", "micron", "max", "dell", "cisco", "hugging", "face", "hub",
    "kaplan", "et", "al", "nvbandwidth", "pcie", "gen", "ddr", "cuda", "hgx", "sxm", "nvl",
    "mooncake",  # the production traces the gap profiles come from (sizing/traffic/return_gaps.py)
    "mi", "fp", "bf", "a", "h", "l", "x", "v", "q", "config", "json", "py", "id",
    "p",  # percentiles: p95, p90
    "deutsch", "english",
    # technical terms German writes the same: GPU, KV cache, token, DIMM, prefill, FLOPs
    "gpu", "gpus", "cpu", "kv", "tp", "dimm", "dimms", "dwpd", "nvme", "numa", "llm",
    "prefill", "flops", "tflops", "token", "cache", "offloading", "offload", "engine",
    "prompt", "system", "tensor", "pipeline", "bit", "byte", "bytes", "block", "blog", "link",
    "ttft", "tpot",  # time to first token, time per output token
    # units
    "gib", "gb", "tb", "mb", "ms", "b", "s", "w",
    # German words spelled like English ones
    "in", "so", "name", "optional", "parameter", "plus", "warm",
    "an", "agent", "chat", "median", "server", "rack", "desktop", "consumer",
    "last",  # German "Last" (load: "die Ihre Last bedienen"), English "the last answer"
}
# fmt: on


def words(text: str) -> set[str]:
    """Lower-case words of ``text``: no numbers, no flags (``--kv-offloading-size``),
    no code identifiers (``cpu_bytes_to_use``), no file paths and no :data:`NAMES`."""
    for name in NAMES:
        text = text.replace(name, " ")
    text = re.sub(r"--[\w-]+|\b\w+_\w+\b|\S+/\S+", " ", text)
    return {w.lower() for w in re.findall(r"[A-Za-zÄÖÜäöüß]+", text)}


@pytest.fixture
def browser(chromium_path: str, monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[Any]:  # noqa: F811
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.HF_HUB_OFFLINE = True
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def visible_text(browser: Any, url: str, locale: str) -> str:
    """The page's visible text with every ``<details>`` opened, and a screenshot."""
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#figure-resident")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"configurator-{locale}.png"), full_page=True)
    text = str(page.evaluate("document.body.innerText"))
    context.close()
    return text


def test_german_page_has_no_english_words(browser: Any, live_server: Any) -> None:
    url = f"{live_server.url}/?{urlencode(SEED_QUERY)}"
    german = visible_text(browser, url, "de-DE")
    english = visible_text(browser, url, "en-US")
    assert "Gespräche auf den GPUs" in german and "Conversations on the GPUs" in english
    # "Replik" is German for a retort (a replica is a "Replikat"); plurals are real ones
    for wrong in ("Replik ", "Repliken", "Replika ", "(en)", "(e)", "verfehlen"):
        assert wrong not in german
    assert "(s)" not in english and "(s)" not in german
    # The traffic defaults are stated as assumptions in the reader's language.
    assert "8 turns per conversation" in english and "8 Gesprächsrunden je Gespräch" in german
    assert "Every user is active in the busiest hour" in english
    assert "Jeder Nutzer ist in der verkehrsreichsten Stunde aktiv" in german
    assert "Ziele: TTFT p95 2.000 ms und TPOT 200 ms" in german
    untranslated = sorted((words(german) & words(english)) - ALLOWED)
    assert not untranslated, f"English words on the German page: {untranslated}"


def test_the_language_applies_on_choice_and_the_button_is_for_no_javascript(
    browser: Any, live_server: Any
) -> None:
    with_js = browser.new_context(locale="de-DE")
    page = with_js.new_page()
    page.goto(f"{live_server.url}/")
    assert page.locator("h1").inner_text() == "Was braucht Ihre LLM-Anwendung?"
    assert page.locator(".lang button").count() == 0  # no button with JavaScript
    with page.expect_navigation():
        page.select_option("#language-select", "en")
    assert page.locator("h1").inner_text() == "What does your LLM workload need?"
    with_js.close()
    without_js = browser.new_context(locale="de-DE", java_script_enabled=False)
    page = without_js.new_page()
    page.goto(f"{live_server.url}/")
    page.select_option("#language-select", "en")
    assert page.locator("h1").inner_text() == "Was braucht Ihre LLM-Anwendung?"  # not yet
    page.locator(".lang button").click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == "What does your LLM workload need?"
    without_js.close()
