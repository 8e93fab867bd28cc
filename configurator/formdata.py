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

import io
import re
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
    segments = body[len(delimiter) :].split(b"\r\n" + delimiter)
    if len(segments) < 2 or not segments[-1].startswith(b"--"):
        return None  # no closing delimiter
    limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
    if limit is not None and len(segments) - 1 > limit:
        return None
    values: dict[str, list[str]] = {}  # every value of each name, in the body's order
    for segment in segments[:-1]:
        part = _part(segment)
        if part is None:
            return None
        key = part[0].strip().decode(encoding, errors="replace")
        values.setdefault(key, []).append(part[1].decode(encoding, errors="replace"))
    fields = QueryDict(encoding=encoding)
    # The lists of text values as QueryDict.setlist stores them (it would only convert
    # the text to text again), in the same order.
    dict.update(fields, values)
    return fields


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
