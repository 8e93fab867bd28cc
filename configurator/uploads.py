"""Defensive reading of what clients upload: body size first, then bounded JSON.

- :func:`body_too_large` refuses a request by its declared ``Content-Length`` before
  Django reads the body (a multipart upload is otherwise streamed to disk whole).
- :func:`parse_json` parses JSON text with limits on nesting depth and on the length of
  a number, so that neither Python's recursion limit nor its 4,300-digit limit on
  int conversion (``sys.set_int_max_str_digits``) turns an upload into a 500.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest

MAX_CONFIG_BYTES = 1_000_000
"""A config.json (uploaded, or on the Hub) larger than this is not a model config: the
largest published ones are a few tens of kB. Also the bound for a safetensors index."""
MAX_JSON_DEPTH = 64
"""Nesting levels a JSON upload may have (model configs use 3 or 4)."""
MAX_NUMBER_CHARS = 100
"""Characters one JSON number may have (a float64 needs at most 24)."""
PUBLIC_MAX_BODY_BYTES = 1_500_000
"""A public form's body: a 1 MB config.json plus the fields and multipart framing."""


class JsonRefused(ValueError):
    """JSON text that is not read: invalid, too deep, or with an over-long number.

    ``code`` is ``not_json``, ``too_deep`` or ``number_too_long``; ``line`` and
    ``column`` locate an invalid document (0 when unknown); ``detail`` says what.
    """

    def __init__(self, code: str, detail: str, *, line: int = 0, column: int = 0) -> None:
        super().__init__(detail)
        self.code, self.detail, self.line, self.column = code, detail, line, column


def _number(kind: type[int] | type[float]) -> Any:
    def convert(text: str) -> int | float:
        if len(text) > MAX_NUMBER_CHARS:
            raise JsonRefused(
                "number_too_long",
                f"a number of {len(text):,} characters (at most {MAX_NUMBER_CHARS})",
            )
        return kind(text)

    return convert


def _refuse_constant(name: str) -> Any:
    raise JsonRefused("not_json", f"{name} is not a JSON number")


def _depth(value: Any) -> int:
    """Nesting depth of a parsed document (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest


def parse_json(text: str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The document ``text`` holds.

    Raises:
        JsonRefused: not JSON (``NaN`` and ``Infinity`` included), nested deeper than
            ``max_depth``, or a number longer than :data:`MAX_NUMBER_CHARS`.
    """
    try:
        value = json.loads(
            text,
            parse_int=_number(int),
            parse_float=_number(float),
            parse_constant=_refuse_constant,
        )
    except json.JSONDecodeError as exc:
        raise JsonRefused("not_json", exc.msg, line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise JsonRefused("too_deep", f"nested deeper than {max_depth} levels") from None
    if _depth(value) > max_depth:
        raise JsonRefused("too_deep", f"nested deeper than {max_depth} levels")
    return value


def body_too_large(request: HttpRequest, max_bytes: int = PUBLIC_MAX_BODY_BYTES) -> bool:
    """Whether ``request`` declares a body larger than ``max_bytes`` (not read)."""
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0) > max_bytes
    except ValueError:
        return True
