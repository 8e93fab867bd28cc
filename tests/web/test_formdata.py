"""The quick path for small multipart bodies returns what Django's own parser returns.

Every body is parsed twice: by :func:`configurator.formdata.split_form_data` and by
Django's :class:`~django.http.multipartparser.MultiPartParser` with Django's default
handlers only (the reference). Bodies the quick path does not take (``None``) must
still reach Django's parser through the handler and give Django's result.
"""

from __future__ import annotations

import io

import pytest
from django.http.multipartparser import MultiPartParser
from django.test import Client, RequestFactory
from django.test.client import encode_multipart

from benchmarks.page_form import form_controls, multipart_body
from configurator.formdata import SmallFormHandler, split_form_data
from tests.seed_form import seed_form

BOUNDARY = "----formdata-0123456789abcdef"
CTYPE = f"multipart/form-data; boundary={BOUNDARY}"
DJANGO_ONLY = [
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]


def _part(name: str, value: str, *, filename: str | None = None, extra: str = "") -> str:
    file = f'; filename="{filename}"' if filename is not None else ""
    head = f'Content-Disposition: form-data; name="{name}"{file}\r\n{extra}'
    return f"--{BOUNDARY}\r\n{head}\r\n{value}\r\n"


def _body(*parts: str) -> bytes:
    return ("".join(parts) + f"--{BOUNDARY}--\r\n").encode()


def _django(body: bytes, settings: object) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    settings.FILE_UPLOAD_HANDLERS = DJANGO_ONLY  # type: ignore[attr-defined]
    request = RequestFactory().generic("POST", "/", body, content_type=CTYPE)
    meta = {"CONTENT_TYPE": CTYPE, "CONTENT_LENGTH": str(len(body))}
    post, files = MultiPartParser(meta, io.BytesIO(body), request.upload_handlers).parse()
    return dict(post.lists()), {k: [f.name for f in v] for k, v in files.lists()}


def _handler(body: bytes, settings: object) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    settings.FILE_UPLOAD_HANDLERS = [  # type: ignore[attr-defined]
        "configurator.formdata.SmallFormHandler",
        *DJANGO_ONLY,
    ]
    request = RequestFactory().generic("POST", "/", body, content_type=CTYPE)
    assert isinstance(request.upload_handlers[0], SmallFormHandler)
    return dict(request.POST.lists()), {k: [f.name for f in v] for k, v in request.FILES.lists()}


PLAIN = [
    # The live estimate's shape: text fields, an empty file input, an empty value.
    _body(
        _part("csrfmiddlewaretoken", "abc"),
        _part("config_file", "", filename="", extra="Content-Type: application/octet-stream\r\n"),
        _part("model", "Qwen/Qwen3-32B-FP8"),
        _part("weights_gib", ""),
    ),
    # Repeated names keep their order; umlauts, newlines and delimiters in values.
    _body(_part("a", "1"), _part("a", "2"), _part("message", 'Grüße\r\n--nicht-die-Grenze;x="y"')),
    # Names with spaces around them, a semicolon inside the quotes, upper-case header.
    _body(
        _part(" spaced ", "v"),
        _part("a;b", "w").replace("Content-Disposition", "CONTENT-DISPOSITION"),
    ),
    # The content type before the disposition (read line by line), then the usual order.
    _body(
        f"--{BOUNDARY}\r\nContent-Type: text/plain\r\n"
        f'Content-Disposition: form-data; name="t"\r\n\r\nv\r\n',
        _part("u", "w", extra="Content-Type: text/plain\r\n"),
    ),
    # Undecodable bytes in a value are replaced, as Django does.
    _body(_part("x", "ok")).replace(b"ok", b"o\xffk"),
    # ASCII bodies (split at once): empty file inputs with a spaced name and without a
    # content type between fields, a blank line and quotes in values, spaced and
    # repeated names, an empty name.
    _body(
        _part(" a ", '"\r\n\r\n"'),
        _part(" g ", "", filename="", extra="Content-Type: application/octet-stream\r\n"),
        _part("f", "", filename=""),
        _part("a", "x\r\n"),
        _part("", "e"),
    ),
    # Upper-case header and the content type first in the last part only.
    _body(_part("x", "1"), _part("y", "2").replace("Content-Disposition", "content-disposition")),
    _body(
        _part("x", "1"),
        f"--{BOUNDARY}\r\nContent-Type: text/plain\r\n"
        f'Content-Disposition: form-data; name="t"\r\n\r\nv\r\n',
    ),
]


@pytest.mark.parametrize("body", PLAIN)
def test_the_quick_path_takes_plain_bodies_and_agrees_with_django(
    body: bytes, settings: object
) -> None:
    quick = split_form_data(body, BOUNDARY.encode(), "utf-8")
    assert quick is not None
    expected_post, expected_files = _django(body, settings)
    assert dict(quick.lists()) == expected_post and expected_files == {}
    assert _handler(body, settings) == (expected_post, {})
    assert not quick._mutable


OTHER = [
    # A chosen file: Django's handlers store it.
    _body(_part("model", "x"), _part("config_file", '{"a": 1}', filename="config.json",
                                     extra="Content-Type: application/json\r\n")),
    # A transfer encoding changes the data.
    _body(_part("x", "aGVsbG8=", extra="Content-Transfer-Encoding: base64\r\n")),
    # A backslash in a quoted name (e-mail header quoting), a non-ASCII name.
    _body(_part("a\\\\b", "1")),
    _body(_part("x", "1"), _part("a\\\\b", "1")),
    _body(_part("x", "1"), _part("tab\tname", "1")),
    _body(_part("näme", "1")),
    # Bare LF line ends, a preamble, no closing delimiter.
    _body(_part("x", "1")).replace(b"\r\n", b"\n"),
    b"preamble\r\n" + _body(_part("x", "1")),
    _body(_part("x", "1"))[: -len(f"--{BOUNDARY}--\r\n")],
    # Another parameter, a part without a name.
    _body(_part("x", "1").replace('name="x"', 'name="x"; size=3')),
    _body(f"--{BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nv\r\n"),
]  # fmt: skip


@pytest.mark.parametrize("body", OTHER)
def test_other_bodies_go_to_djangos_parser(body: bytes, settings: object) -> None:
    assert split_form_data(body, BOUNDARY.encode(), "utf-8") is None
    assert _handler(body, settings) == _django(body, settings)


def test_more_parts_than_django_allows_is_djangos_error(settings: object, client: Client) -> None:
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 5  # type: ignore[attr-defined]
    body = _body(*(_part(f"f{i}", "1") for i in range(10)))
    assert split_form_data(body, BOUNDARY.encode(), "utf-8") is None
    response = client.post("/estimate/", body, content_type=CTYPE, headers={"HX-Request": "true"})
    assert response.status_code == 400  # Django's TooManyFieldsSent, not a 5xx


@pytest.mark.django_db
def test_the_pages_own_request_is_estimated_through_the_quick_path(client: Client) -> None:
    # The body the configurator page sends (benchmarks.page_form), seed workload
    # (docs/sizing.md: 204 conversations on four RTX PRO 6000 cards).
    controls = form_controls(client.get("/").content.decode())
    body, ctype = multipart_body(controls, {k: str(v) for k, v in seed_form().items()})
    assert split_form_data(body, ctype.split("boundary=")[1].encode(), "utf-8") is not None
    response = client.post("/estimate/", body, content_type=ctype, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert '<dd class="value">204</dd>' in response.content.decode()


def test_django_test_client_bodies_agree(settings: object) -> None:
    body = encode_multipart(BOUNDARY, {"a": "1", "b": ["2", "3"], "c": "ü"})
    assert _handler(body, settings) == _django(body, settings)
