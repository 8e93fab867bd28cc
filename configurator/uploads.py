"""Defensive reading of what clients upload: body size first, then bounded JSON.

- :func:`body_too_large` tells by its declared ``Content-Length`` whether a request's
  body is over the public limit, before Django reads it. :func:`read_oversized_body`
  then lets Django read it with :class:`ConfigSizedUploadHandler`, which keeps a file
  only up to :data:`MAX_CONFIG_BYTES` (a multipart upload is otherwise streamed to disk
  whole), so that the form can refuse the file at its field and keep the other inputs.
  A body over :data:`PUBLIC_MAX_READ_BYTES` is not read at all.
- :func:`read_at_most` reads a file named on the command line only up to a limit, so a
  device (``/dev/zero``) or a weights file is refused instead of read without end.
- :func:`parse_json` parses JSON text with limits on nesting depth and on the length of
  a number, so that neither Python's recursion limit nor its 4,300-digit limit on
  int conversion (``sys.set_int_max_str_digits``) turns an upload into a 500. A model's
  ``config.json`` is read as transformers reads it (Python's ``json``, which takes
  ``NaN``, ``Infinity`` and ``-Infinity``: nvidia/Nemotron-H-56B-Base-8K has
  ``"time_step_limit": [0.0, Infinity]``); request bodies of the JSON API still refuse
  them (RFC 8259 §6).
- :func:`json_storable` writes those three as strings, which a PostgreSQL ``jsonb``
  column takes (it refuses the bare constants).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from django.core.files.uploadedfile import InMemoryUploadedFile
from django.core.files.uploadhandler import FileUploadHandler
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
PUBLIC_MAX_READ_BYTES = 16 * 2**20
"""A public form's body larger than this (16 MiB) is not read: its file cannot be a
config.json, and reading it would only cost time."""


class JsonRefused(ValueError):
    """JSON text that is not read: invalid, too deep, or with an over-long number.

    ``code`` is ``not_json``, ``too_deep`` or ``number_too_long``; ``line`` and
    ``column`` locate an invalid document (0 when unknown); ``detail`` says what, in
    English; ``values`` holds its figures for a translated message (``max_depth`` for
    ``too_deep``; ``chars`` and ``max_chars`` for ``number_too_long``).
    """

    def __init__(
        self,
        code: str,
        detail: str,
        *,
        line: int = 0,
        column: int = 0,
        values: dict[str, int] | None = None,
    ) -> None:
        super().__init__(detail)
        self.code, self.detail, self.line, self.column = code, detail, line, column
        self.values = values or {}


def _number(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    def convert(text: str) -> int | float:
        if len(text) > MAX_NUMBER_CHARS:
            raise JsonRefused(
                "number_too_long",
                f"a number of {len(text):,} characters (at most {MAX_NUMBER_CHARS})",
                values={"chars": len(text), "max_chars": MAX_NUMBER_CHARS},
            )
        return kind(text)

    return convert


class _ConstantRefused(Exception):
    """``NaN``, ``Infinity`` or ``-Infinity`` where JSON wants a number (RFC 8259 §6)."""


def _refuse_constant(name: str) -> NoReturn:
    raise _ConstantRefused(name)


_CONSTANT_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')
"""A JSON string (skipped) or one of the constants Python's reader takes for numbers."""


def _constant_refused(text: str, name: str) -> JsonRefused:
    """The refusal of the constant ``name`` at its first place outside a string in
    ``text``, with its line and column as :class:`json.JSONDecodeError` counts them (the
    reader reached it in order, so every string before it is closed)."""
    line = column = 0
    for match in _CONSTANT_OR_STRING.finditer(text):
        if match.group(1):
            start = match.start(1)
            line = text.count("\n", 0, start) + 1
            column = start - text.rfind("\n", 0, start)
            break
    return JsonRefused("not_json", f"{name} is not a JSON number", line=line, column=column)


def _depth(value: object) -> int:
    """Nesting depth of a parsed document (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, level + 1) for child in children)
    return deepest


def _too_deep(max_depth: int) -> JsonRefused:
    return JsonRefused(
        "too_deep", f"nested deeper than {max_depth} levels", values={"max_depth": max_depth}
    )


def read_at_most(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of the file ``path``, or ``None`` when it holds more than ``max_bytes``
    (only ``max_bytes + 1`` are read to tell).

    Raises:
        OSError: the system's refusal to open or read ``path``.
    """
    with path.open("rb") as file:
        data = file.read(max_bytes + 1)
    return None if len(data) > max_bytes else data


def parse_json(text: str, *, max_depth: int = MAX_JSON_DEPTH, allow_constants: bool = False) -> Any:
    """The document ``text`` holds.

    Args:
        text: the JSON text.
        max_depth: the deepest nesting taken.
        allow_constants: take ``NaN``, ``Infinity`` and ``-Infinity`` as floats, as
            Python's ``json`` (and so transformers) reads a ``config.json``.

    Raises:
        JsonRefused: not JSON (``NaN`` and ``Infinity`` included unless
            ``allow_constants``), nested deeper than ``max_depth``, or a number longer
            than :data:`MAX_NUMBER_CHARS`.
    """
    try:
        value = json.loads(
            text,
            parse_int=_number(int),
            parse_float=_number(float),
            parse_constant=float if allow_constants else _refuse_constant,
        )
    except json.JSONDecodeError as exc:
        raise JsonRefused("not_json", exc.msg, line=exc.lineno, column=exc.colno) from None
    except _ConstantRefused as exc:
        raise _constant_refused(text, str(exc)) from None
    except RecursionError:
        raise _too_deep(max_depth) from None
    if _depth(value) > max_depth:
        raise _too_deep(max_depth)
    return value


def json_storable(value: Any) -> Any:
    """``value`` with every non-finite float written as the JSON constant's name
    (``"Infinity"``, ``"-Infinity"``, ``"NaN"``), so that a ``jsonb`` column stores it;
    everything else unchanged. Used for parsed ``config.json`` documents, whose
    non-finite fields (Mamba ``time_step_limit``) the sizing does not read."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {key: json_storable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_storable(item) for item in value]
    return value


def body_too_large(request: HttpRequest, max_bytes: int = PUBLIC_MAX_BODY_BYTES) -> bool:
    """Whether ``request`` declares a body larger than ``max_bytes`` (not read)."""
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0) > max_bytes
    except ValueError:
        return True


class ConfigSizedUploadHandler(FileUploadHandler):
    """Keeps each uploaded file in memory up to :data:`MAX_CONFIG_BYTES`; a larger one
    arrives as an empty file that carries its true ``size`` (the form refuses it by
    size). Nothing goes to disk, and a request keeps at most
    ``DATA_UPLOAD_MAX_NUMBER_FILES`` × 1 MB of file data (its body is at most
    :data:`PUBLIC_MAX_READ_BYTES` anyway)."""

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        """Start an empty buffer for the file that begins."""
        super().new_file(*args, **kwargs)
        self._kept = io.BytesIO()

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        """Keep ``raw_data`` while the file is within the limit; pass nothing on."""
        if start + len(raw_data) <= MAX_CONFIG_BYTES:
            self._kept.write(raw_data)

    def file_complete(self, file_size: int) -> InMemoryUploadedFile:
        """The file of ``file_size`` bytes: its content, or none when over the limit."""
        kept = self._kept if file_size <= MAX_CONFIG_BYTES else io.BytesIO()
        kept.seek(0)
        return InMemoryUploadedFile(
            kept,
            self.field_name,
            self.file_name,
            self.content_type,
            file_size,
            self.charset,
            self.content_type_extra,
        )


def read_oversized_body(request: HttpRequest) -> bool:
    """Prepare ``request``, whose body is over the public limit, to be read with
    :class:`ConfigSizedUploadHandler` only; ``False`` (leave it unread) when it declares
    more than :data:`PUBLIC_MAX_READ_BYTES`. Call before ``request.POST`` is read."""
    if body_too_large(request, PUBLIC_MAX_READ_BYTES):
        return False
    # AttributeError: read already (Django's CSRF check reads a form post without the
    # token header), with the default handlers
    with contextlib.suppress(AttributeError):
        request.upload_handlers = [ConfigSizedUploadHandler(request)]
    return True
