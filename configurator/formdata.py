"""A quick path for the small ``multipart/form-data`` bodies the pages post.

The configurator's form has a file field, so every live estimate is posted as
``multipart/form-data`` (about 30 text parts and one empty file part). Django's
:class:`~django.http.multipartparser.MultiPartParser` reads such a body through a chunked
stream part by part, which costs more than the estimate's sizing. :class:`SmallFormHandler`
is an upload handler (Django's documented ``handle_raw_input`` hook, first in
``FILE_UPLOAD_HANDLERS``) that reads a small body at once and splits it on its boundary
when it has the plain shape browsers send (RFC 7578 section 4: a
``Content-Disposition: form-data`` header per part, CRLF line ends, no transfer
encoding) and no file is chosen. Anything else — a file with a name, another header, a
bare-LF body, more parts than ``DATA_UPLOAD_MAX_NUMBER_FIELDS`` — goes to Django's own
parser on the same bytes, with the other handlers, so limits, errors and uploads behave
as Django defines them. The fields it returns are the ones Django's parser would return
for the same body (``tests/web/test_formdata.py`` compares both).
"""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler
from django.http import QueryDict
from django.http.multipartparser import MultiPartParser
from django.utils.datastructures import MultiValueDict

MAX_BODY_BYTES = 64 * 1024
"""Bodies up to this size are read at once (the live estimate's is about 4 KB); larger
ones, and every upload, are left to Django's streaming parser."""


_DISPOSITION = re.compile(
    rb'content-disposition: form-data; name="([ !#-\[\]-~]*)"(?:; filename="([ !#-\[\]-~]*)")?',
    re.IGNORECASE,
)
"""The part header browsers write (WHATWG HTML, "multipart/form-data encoding
algorithm": quotes and line breaks in names are percent-encoded, backslashes are not
escaped). A header with a backslash, another parameter or non-ASCII text goes to
Django's parser, which reads quoted strings by e-mail header rules."""
_CONTENT_TYPE = re.compile(rb"content-type: [!-~ ]*", re.IGNORECASE)
_COMMON_PART = re.compile(
    rb'\r\ncontent-disposition: form-data; name="([ !#-\[\]-~]*)"(?:; filename="")?'
    rb"(?:\r\ncontent-type: [!-~ ]*)?\r\n\r\n",
    re.IGNORECASE,
)
"""The head of a part as browsers write it for a field or an empty file input (the same
header lines as :data:`_DISPOSITION` and :data:`_CONTENT_TYPE`, in that order): read with
one match; any other head is read line by line (:func:`_part`)."""


def _part(segment: bytes) -> tuple[bytes, bytes] | None:
    """The name and content of one part (the bytes between two delimiters), or ``None``
    when the part is not a field of the plain shape."""
    common = _COMMON_PART.match(segment)
    if common is not None:
        return common.group(1), segment[common.end() :]
    if not segment.startswith(b"\r\n"):
        return None
    head, found, content = segment[2:].partition(b"\r\n\r\n")
    if not found:
        return None
    name: bytes | None = None
    for line in head.split(b"\r\n"):
        match = _DISPOSITION.fullmatch(line)
        if match is not None and name is None:
            if match.group(2):
                return None  # a chosen file: Django's handlers store it
            name = match.group(1)
        elif _CONTENT_TYPE.fullmatch(line) is None:
            return None
    return None if name is None else (name, content)


def split_form_data(body: bytes, boundary: bytes, encoding: str) -> QueryDict | None:
    """The fields of a plain ``multipart/form-data`` ``body`` as Django's parser returns
    them, or ``None`` when the body is not of that shape (then Django's parser must read
    it).

    A part is a field unless it names a file: an empty file input (``filename=""``) is a
    field with an empty value, as in Django's parser. Names are stripped of ASCII
    whitespace; names and values are decoded with ``encoding``, undecodable bytes
    replaced.
    """
    delimiter = b"--" + boundary
    if not body.startswith(delimiter + b"\r\n"):
        return None
    separator = b"\r\n" + delimiter
    parts = body.count(separator)  # the delimiters after the first: the last closes
    close = body.rfind(separator)
    if parts < 1 or not body.startswith(b"--", close + len(separator)):
        return None  # no closing delimiter
    limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
    if limit is not None and parts > limit:
        return None
    if body.isascii() and _utf8(encoding):
        values = _ascii_parts(body[:close].decode("ascii"), delimiter.decode("ascii"), parts)
    else:
        values = None
    if values is None:
        values = _parts(body[len(delimiter) : close].split(separator), encoding)
        if values is None:
            return None
    fields = QueryDict(encoding=encoding)
    # The lists of text values as QueryDict.setlist stores them (it would only convert
    # the text to text again), in the same order.
    dict.update(fields, values)
    return fields


@cache
def _utf8(encoding: str) -> bool:
    """Whether ``encoding`` names UTF-8 (which decodes ASCII bytes to the same text)."""
    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


_FIELD_HEAD = '\r\nContent-Disposition: form-data; name="'
"""The head of a field's part as browsers write it, up to the name."""


def _ascii_parts(text: str, delimiter: str, parts: int) -> dict[str, list[str]] | None:
    """The fields of ``text``, an ASCII body up to its closing delimiter, when each of
    its ``parts`` starts with :data:`_FIELD_HEAD` (else ``None``): what :func:`_parts`
    reads, with one split for the whole body.

    A field's head ends at the name's closing quote with a blank line; any other head
    (an empty file input's) is read by :func:`_part`.
    """
    chunks = ("\r\n" + text).split("\r\n" + delimiter + _FIELD_HEAD)
    if len(chunks) != parts + 1 or chunks[0]:
        return None  # a part with another head
    pairs = []
    names = []
    for chunk in chunks[1:]:
        name, found, content = chunk.partition('"\r\n\r\n')
        if found and '"' not in name:  # (a quote: the name is followed by a parameter)
            names.append(name)
            pairs.append((name, content))
        else:
            part = _part((_FIELD_HEAD + chunk).encode("ascii"))
            if part is None:
                return None
            pairs.append((part[0].strip().decode("ascii"), part[1].decode("ascii")))
    # the names _DISPOSITION takes: printable ASCII but for quotes and backslashes
    joined = "".join(names)
    if not joined.isprintable() or "\\" in joined:
        return None
    strip = " " in joined
    values: dict[str, list[str]] = {}  # every value of each name, in the body's order
    for name, content in pairs:
        key = name.strip() if strip else name
        if key in values:
            values[key].append(content)
        else:
            values[key] = [content]
    return values


def _parts(segments: list[bytes], encoding: str) -> dict[str, list[str]] | None:
    """The fields of the ``segments`` between a body's delimiters (the last one's
    closing excluded), or ``None`` when one is not a field of the plain shape."""
    values: dict[str, list[str]] = {}  # every value of each name, in the body's order
    common_part = _COMMON_PART.match
    for segment in segments:
        common = common_part(segment)  # the usual head, as in _part
        if common is not None:
            name, content = common.group(1), segment[common.end() :]
        else:
            part = _part(segment)
            if part is None:
                return None
            name, content = part
        key = name.strip().decode(encoding, errors="replace")
        value = content.decode(encoding, errors="replace")
        if key in values:
            values[key].append(value)
        else:
            values[key] = [value]
    return values


def posted_value(data: Mapping[str, Any], name: str, default: Any = None) -> Any:
    """``data.get(name, default)``: for Django's ``QueryDict`` and ``MultiValueDict``
    themselves (no subclass), read from their dict of value lists as
    ``MultiValueDict.get`` reads it (the last value; ``default`` for none or ``[]``)."""
    if type(data) is QueryDict or type(data) is MultiValueDict:
        values = dict.get(data, name)
        if not values:
            return default
        value = values[-1]
        return default if type(value) is not str and value == [] else value
    return data.get(name, default)


class SmallFormHandler(FileUploadHandler):
    """Parses small plain ``multipart/form-data`` bodies at once (module docstring);
    passes every other body, and every file's data, on to the next handlers."""

    def handle_raw_input(
        self,
        input_data: Any,
        META: dict[str, Any],
        content_length: int,
        boundary: str | bytes,
        encoding: str | None = None,
    ) -> tuple[QueryDict, MultiValueDict[str, Any]] | None:
        """``(POST, FILES)`` for a small body, else ``None`` (Django's parser reads it).

        ``boundary`` comes as bytes from Django's parser (its stubs say ``str``)."""
        most = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        too_big = content_length > MAX_BODY_BYTES or (most is not None and content_length > most)
        if self.request is None or content_length <= 0 or too_big:
            return None
        body = input_data.read(content_length)
        encoding = encoding or settings.DEFAULT_CHARSET
        delimiter = boundary.encode("ascii") if isinstance(boundary, str) else boundary
        fields = split_form_data(body, delimiter, encoding)
        if fields is not None:
            return fields, MultiValueDict()
        others = [h for h in self.request.upload_handlers if h is not self]
        post, files = MultiPartParser(META, io.BytesIO(body), others, encoding).parse()
        return post, files

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        """Hand a file's data to the next handler."""
        return raw_data

    def file_complete(self, file_size: int) -> None:
        """The next handlers store the file."""
        return None
