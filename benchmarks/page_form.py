"""The live-estimate request exactly as the configurator page sends it.

The page's workload fieldset posts ``hx-include="closest form"`` url-encoded (htmx's
default for a request that is not a form with a multipart ``enctype`` and has no
``hx-encoding``): every named control of the whole form, as a browser's ``FormData``
collects them (text, number, hidden and other inputs with their values, the selected
option of each select, textareas, checked checkboxes only); the config.json input
belongs to a form of its own (its ``form`` attribute) and is not sent. This module reads
those controls from the page's HTML, so the benchmark follows the page when its form
changes, and sets the fields a customer types.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlencode

SKIPPED_TYPES = frozenset({"submit", "button", "reset", "image"})


class _FormControls(HTMLParser):
    """``(name, value, is_file)`` of the controls inside ``<form id=form_id>``."""

    def __init__(self, form_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.inside = False
        self.controls: list[tuple[str, str, bool]] = []
        self._select: str | None = None
        self._select_first: str | None = None
        self._select_chosen: str | None = None
        self._textarea: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: (v or "") for k, v in attrs}
        if tag == "form":
            self.inside = a.get("id") == self.form_id
            return
        if not self.inside or "disabled" in a:
            return
        name = a.get("name")
        if a.get("form", self.form_id) != self.form_id:
            return  # a control of another form (its form attribute)
        if tag == "input" and name:
            kind = a.get("type", "text").lower()
            if kind in SKIPPED_TYPES or (kind in ("checkbox", "radio") and "checked" not in a):
                return
            if kind == "file":
                self.controls.append((name, "", True))
            else:
                default = "on" if kind in ("checkbox", "radio") else ""
                self.controls.append((name, a.get("value", default), False))
        elif tag == "select" and name:
            self._select, self._select_first, self._select_chosen = name, None, None
        elif tag == "option" and self._select is not None:
            value = a.get("value", "")
            if self._select_first is None:
                self._select_first = value
            if "selected" in a:
                self._select_chosen = value
        elif tag == "textarea" and name:
            self._textarea, self._text = name, []

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False
        elif tag == "select" and self._select is not None:
            chosen = self._select_chosen if self._select_chosen is not None else self._select_first
            self.controls.append((self._select, chosen or "", False))
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            self.controls.append((self._textarea, "".join(self._text), False))
            self._textarea = None


def form_controls(html: str, form_id: str = "configurator") -> list[tuple[str, str, bool]]:
    """The controls a browser's ``FormData`` takes from the form ``form_id`` in ``html``."""
    parser = _FormControls(form_id)
    parser.feed(html)
    return parser.controls


def urlencoded_body(
    controls: list[tuple[str, str, bool]], typed: dict[str, str]
) -> tuple[bytes, str]:
    """The url-encoded body of ``controls`` with the ``typed`` values, and its content
    type (a file input, none in the live estimate's form, would send nothing).

    Raises:
        KeyError: a ``typed`` name is not a control of the form.
    """
    names = {name for name, _, _ in controls}
    missing = set(typed) - names
    if missing:
        raise KeyError(f"the form has no control named {sorted(missing)}")
    pairs = [(name, typed.get(name, value)) for name, value, is_file in controls if not is_file]
    return urlencode(pairs).encode(), "application/x-www-form-urlencoded"
