"""Reading the JSON API's request bodies: JSON only (by its declared media type), and a
body that cannot be read refused with one line saying why."""

from __future__ import annotations

import contextlib
import json
from typing import Any, cast

from django.http import HttpRequest
from django.utils.datastructures import MultiValueDict
from ninja.parser import Parser

from sizing.errors import SizingError
from sizing.workload import INPUTS, SHORT_NAMES

JSON_TYPE = "application/json"
"""The media type of every request body the API reads (RFC 8259; ``application/*+json``
too). A form's types (``text/plain``, ``application/x-www-form-urlencoded``,
``multipart/form-data``) are refused: a browser sends those cross-site without a CORS
preflight, so accepting them would let any web page start sizing runs."""


class UnsupportedMediaType(Exception):
    """A request body that is not declared JSON (answered 415)."""

    def __init__(self, content_type: str) -> None:
        super().__init__(content_type)
        self.content_type = content_type


def _is_json(content_type: str) -> bool:
    """Whether the media type ``content_type`` (no parameters) is JSON."""
    kind = content_type.strip().lower()
    return kind == JSON_TYPE or (kind.startswith("application/") and kind.endswith("+json"))


class OverlongInteger:
    """A JSON integer of more digits than Python reads (``sys.get_int_max_str_digits``,
    4,300 by default: reading more costs time that grows with the square of the digits),
    kept as its size so that the input it was given for is named in the refusal."""

    def __init__(self, text: str) -> None:
        self.negative = text.startswith("-")
        self.digits = len(text.lstrip("-"))

    @property
    def approximately(self) -> str:
        """The number as an error quotes it, by its power of ten (``about 1e+4999``)."""
        return f"about {'-' if self.negative else ''}1e+{self.digits - 1}"


def _integer(text: str) -> int | OverlongInteger:
    """A JSON integer as Python's ``int``, or :class:`OverlongInteger` past its limit."""
    try:
        return int(text)
    except ValueError:
        return OverlongInteger(text)


class BodyRefused(ValueError):
    """A request body that is not read: not UTF-8, not JSON, or nested too deeply
    (answered 400 with the message)."""


class WorkloadParser(Parser):
    """Reads a JSON body (refusing other media types) and a query's short field names
    (``context``) as the :class:`Workload` fields, each text as the value of its input's
    type (:meth:`sizing.inputs.Input.parse`, as the CLI reads a flag)."""

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        """The JSON body of ``request``.

        Raises:
            UnsupportedMediaType: the body is not declared ``application/json``.
            BodyRefused: it is not UTF-8 JSON or is nested past Python's recursion
                limit. An integer past Python's limit on its digits is read as an
                :class:`OverlongInteger`, refused at its field.
            (django-ninja answers both 400; ``configurator.deployments.api.http_error``
            turns the first into 415 and words the second.)
        """
        if not _is_json(request.content_type or ""):
            raise UnsupportedMediaType(request.content_type or "")
        try:
            body = json.loads(request.body, parse_int=_integer)
        except RecursionError:
            raise BodyRefused(
                "the request body is nested too deeply to read: a sizing request is one "
                "JSON object of fields"
            ) from None
        except json.JSONDecodeError as exc:
            raise BodyRefused(
                f"the request body is not valid JSON: {exc.msg} at line {exc.lineno}, "
                f"column {exc.colno}"
            ) from None
        except UnicodeDecodeError:
            raise BodyRefused("the request body is not UTF-8 text") from None
        return cast(dict[str, Any], body)

    def parse_querydict(
        self, data: MultiValueDict[str, Any], list_fields: list[str], request: HttpRequest
    ) -> dict[str, Any]:
        parsed = super().parse_querydict(data, list_fields, request)
        for name, short in SHORT_NAMES.items():
            if short in parsed and name not in parsed:
                parsed[name] = parsed.pop(short)
        for name, text in parsed.items():
            if name in INPUTS and isinstance(text, str):
                # a text that is not of the input's type stays text: the schema refuses it
                with contextlib.suppress(SizingError):
                    parsed[name] = INPUTS[name].parse(text)
        return parsed
