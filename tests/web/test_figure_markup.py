"""The figures' markup (``figures|figure_items``): every text of a figure escaped as
Django's ``conditional_escape`` escapes it, each in its own element, also when a text
holds the character the texts are joined by for their one escape."""

from __future__ import annotations

import pytest
from django.utils import translation
from django.utils.html import conditional_escape

from configurator.inquiries.explain import Figure
from configurator.inquiries.templatetags.markup import figure_items

TEXTS = {
    "key": "k&1",
    "label": "a<b",
    "value": '"1.152" GiB & more',
    "detail": "it's",
    "steps": ("1 < 2", "x > z", ""),
    "source": "vllm/v1 <kv_cache_interface.py>",
}


@pytest.mark.parametrize("separator", ["", "\0"])
def test_each_text_of_each_figure_is_escaped_in_its_element(separator: str) -> None:
    first = Figure(**{**TEXTS, "source": TEXTS["source"] + separator})  # type: ignore[arg-type]
    second = Figure(key="b", label="B>", value="2", detail="", steps=(), source="S&")
    with translation.override("en"):
        html = figure_items([first, second])
    e = conditional_escape
    assert f'<div class="figure" id="figure-{e("k&1")}">' in html
    assert f"<dt>{e('a<b')}</dt>" in html
    assert f'<dd class="value">{e(TEXTS["value"])}</dd>' in html
    assert f'<dd class="detail">{e("it" + chr(39) + "s")}</dd>' in html
    assert f"<ol>{''.join(f'<li>{e(s)}</li>' for s in TEXTS['steps'])}</ol>" in html
    assert f"Source: {e(TEXTS['source'] + separator)}</p>" in html
    assert '<div class="figure" id="figure-b">' in html and "<dt>B&gt;</dt>" in html
    assert "<ol></ol>" in html and "Source: S&amp;</p>" in html
    assert html.count('class="detail"') == 1
