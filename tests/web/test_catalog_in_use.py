"""Every German msgid is a text the code or a template still uses: a catalog entry for a
text that was reworded is a translation nobody reads (and hides a missing one).

A text counts as used when its words appear in a Python module (adjacent string
literals joined, as Python joins them), a template (``{% translate %}``, or
``{% blocktranslate trimmed %}`` with ``{{ name }}`` for ``%(name)s``) or an SVG
template; ``makemessages`` cannot tell, since it reads neither SVG templates nor
f-strings.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CATALOGS = sorted(ROOT.glob("configurator/**/locale/de/LC_MESSAGES/django.po"))
PLACEHOLDER = r"%\(\w+\)[sd]"
# what a placeholder is in the source: itself, a template variable or an f-string field
IN_SOURCE = r"(?:%\(\w+\)[sd]|\{\{ ?[\w.|:\"']+ ?\}\}|\{[^{}]*\})"


def msgids(path: Path) -> list[str]:
    """The msgids of the catalog at ``path`` (not the header's empty one)."""
    found = []
    for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
        lines = [line for line in block.splitlines() if not line.startswith("#")]
        text, inside = "", False
        for line in lines:
            if line.startswith("msgid "):
                text, inside = line[len("msgid ") :].strip()[1:-1], True
            elif inside and line.startswith('"'):
                text += line.strip()[1:-1]
            else:
                inside = False
        if text:
            found.append(text.replace('\\"', '"'))
    return found


@cache
def source() -> str:
    """Every module and template, adjacent literals joined and spaces collapsed."""
    files = [*ROOT.glob("configurator/**/*.py"), *ROOT.glob("sizing/**/*.py")]
    files += [p for p in ROOT.glob("templates/**/*") if p.suffix in {".html", ".txt", ".svg"}]
    texts = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"\"\s*\n\s*f?\"", "", text)
        text = re.sub(r"'\s*\n\s*f?'", "", text)
        texts.append(re.sub(r"\s+", " ", text))
    return "\n".join(texts)


def used(msgid: str) -> bool:
    text = re.sub(r"\s+", " ", msgid.replace("\\n", "\n")).strip()  # a line break is a space
    pieces = re.split(f"({PLACEHOLDER})", text)
    pattern = "".join(
        IN_SOURCE
        if re.fullmatch(PLACEHOLDER, piece)
        else re.escape(piece).replace("%%", "%%?").replace("'", "(?:'|&\\#x27;|\\\\')")
        for piece in pieces
    )
    return re.search(pattern, source()) is not None


@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_german_text_is_still_used(catalog: Path) -> None:
    ids = msgids(catalog)
    assert len(ids) > 50  # the catalog is read
    assert [msgid for msgid in ids if not used(msgid)] == []
