"""The verdict's sentences (``{% note_sentence note %}``): one for every note the engine
gives, translated into German with the same values, each value escaped where the page
escapes and printed as it is in the plain-text e-mail, numbers rounded and grouped as
Django's ``floatformat`` does.

Expected values come from ``configurator/locale/de/LC_MESSAGES/django.po`` (the
``no_measured_basis`` and ``gpus_saved`` entries), from the English message ids of
``configurator/inquiries/templatetags/note_messages.py`` and from Django's
``floatformat`` filter itself.
"""

from __future__ import annotations

import re

import pytest
from django.template import engines
from django.utils import translation

from configurator.inquiries.notes import view
from configurator.inquiries.templatetags.note_messages import SENTENCES
from sizing.verdict import ENGLISH

PAGE = "{% load note_sentences %}{% note_sentence note %}"
MAIL = "{% load note_sentences %}{% autoescape off %}{% note_sentence note %}{% endautoescape %}"


def worded(source: str, code: str, values: dict[str, object], language: str) -> str:
    with translation.override(language):
        return engines["django"].from_string(source).render({"note": view(code, values)})


def placeholders(message: str) -> set[str]:
    return set(re.findall(r"%\((\w+)\)s", message))


def test_every_note_of_the_engine_has_a_sentence() -> None:
    assert set(SENTENCES) == set(ENGLISH)


@pytest.mark.parametrize("code", sorted(SENTENCES))
def test_every_sentence_is_german_with_the_same_values(code: str) -> None:
    sentence = SENTENCES[code]
    names = set(sentence.values) | ({sentence.count[0]} if sentence.count[0] else set())
    for n, message in ((1, sentence.singular), (2, sentence.plural or sentence.singular)):
        assert placeholders(message) <= names
        with translation.override("de"):
            if sentence.plural:
                german = translation.ngettext(sentence.singular, sentence.plural, n)
            else:
                german = translation.gettext(message)
        assert german != message, "no German translation (configurator/locale/de django.po)"
        assert placeholders(german) == placeholders(message)


def test_a_value_is_escaped_on_the_page_and_plain_in_the_mail() -> None:
    values = {"gpu": "A&B <GPU>"}
    assert worded(PAGE, "no_measured_basis", values, "de") == (
        "Keine Messgrundlage für den Prefill auf A&amp;B &lt;GPU&gt;: die Schätzung kann "
        "nicht sagen, was ein Nachladen gegenüber einer Neuberechnung spart; das Urteil "
        "beruht allein auf dem Speicher."
    )
    assert worded(MAIL, "no_measured_basis", values, "en") == (
        "No measured basis for prefill on A&B <GPU>: the plan cannot say what a reload "
        "saves against a recompute, so the verdict rests on memory alone."
    )


def test_numbers_are_grouped_in_the_language() -> None:
    assert worded(PAGE, "gpus_saved", {"gpus": 1234}, "de") == (
        "Ohne Speicherstufe bräuchte dieselbe TTFT p95 1.234 GPUs mehr."
    )
    assert worded(PAGE, "gpus_saved", {"gpus": 1234}, "en") == (
        "Without the tier the same TTFT p95 would take 1,234 more GPUs."
    )


def test_an_unknown_code_says_nothing() -> None:
    assert worded(PAGE, "not_a_note", {}, "en") == ""


def test_the_ttft_comparison_reads_two_times_in_ms_with_the_gain() -> None:
    # Grouped: 117.3 against 1,124.8 ms, 1,007.5 ms (1,007.5 / 1,124.8 = 89.6 %) less;
    # then the H200 NVL case of tests/sizing/test_ttft_comparison.py (124.8 ms, 7.5 ms,
    # 6.0 %). The German from configurator/locale/de django.po.
    values = {"cpu_pct": 4, "gpu_pct": 94, "nvme_pct": 2, "shared_pct": 0, "miss_pct": 0}
    values |= {"ttft_ms": 117.3, "ttft_no_tier_ms": 1124.8, "gain_ms": 1007.5, "gain_pct": 89.6}
    assert worded(PAGE, "tier_hits", values, "en").endswith(
        "TTFT p95 117.3 ms instead of 1,124.8 ms on the same GPUs without the tier, "
        "1,007.5 ms (89.6 %) less."
    )
    assert worded(PAGE, "tier_hits", values, "de").endswith(
        "TTFT p95 117,3 ms statt 1.124,8 ms auf denselben GPUs ohne Speicherstufe, "
        "1.007,5 ms (89,6 %) weniger."
    )
    values |= {"ttft_no_tier_ms": 124.8, "gain_ms": 7.5, "gain_pct": 6.0}
    assert worded(PAGE, "tier_hits", values, "en").endswith("7.5 ms (6 %) less.")


def test_a_comparison_stored_in_seconds_still_reads() -> None:
    # A snapshot of the former values: 0.58 s against 1.25 s is 580 against 1,250 ms,
    # 670 ms (670 / 1,250 = 53.6 %) less.
    values = {"cpu_pct": 91, "gpu_pct": 7, "nvme_pct": 0, "shared_pct": 0, "miss_pct": 2}
    values |= {"ttft_s": 0.58, "ttft_no_tier_s": 1.25}
    assert worded(PAGE, "tier_hits", values, "en").endswith(
        "TTFT p95 580 ms instead of 1,250 ms on the same GPUs without the tier, "
        "670 ms (53.6 %) less."
    )
