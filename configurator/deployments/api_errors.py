"""The JSON API's one error shape: ``{"field", "code", "detail"}``.

Every refusal of the API answers this object (``docs/engines.md``), whatever refused
the request: the schema (a type, a missing or unknown field), an input's declared
limits (:meth:`sizing.inputs.Input.check`, the check the form and the CLI make), the
sizing engine, or the request as a whole (its body, its size, its media type, the
method, the rate limit, a path that is no endpoint).

- ``field``: the input, by its :class:`~sizing.workload.Workload` field name
  (``users``; an item of a list as ``gpus.0``, a model input as
  ``config.num_key_value_heads``); ``null`` only when the request as a whole is refused.
- ``code``: the case, machine-readable (``between``, ``whole_number``,
  ``weights_do_not_fit``, ``body_too_large``…).
- ``detail``: one English sentence naming the input.

:func:`error_response` is the one place the shape is written; every handler of the
API, its URLconf and anything that refuses an API request before it is parsed calls it.
"""

from __future__ import annotations

from django.http import JsonResponse
from ninja import Schema

from sizing.errors import SizingError


class ErrorOut(Schema):
    """Why the request is refused: the input (``null``: the request as a whole), the
    case and one English sentence."""

    field: str | None
    code: str
    detail: str


def error_response(
    *, field: str | None, code: str, detail: str, status: int, headers: dict[str, str] | None = None
) -> JsonResponse:
    """The API's answer refusing a request: :class:`ErrorOut` as JSON with ``status``
    and ``headers`` (``Retry-After``, ``Allow``)."""
    return JsonResponse(
        {"field": field, "code": code, "detail": detail}, status=status, headers=headers
    )


def input_error_response(
    exc: SizingError, *, status: int = 400, headers: dict[str, str] | None = None
) -> JsonResponse:
    """:func:`error_response` of an error on an input: its field (``""``: the request
    as a whole, ``null``), its code (``input_refused`` when it has none) and its English
    message."""
    return error_response(
        field=exc.field or None,
        code=exc.code or "input_refused",
        detail=exc.message,
        status=status,
        headers=headers,
    )
