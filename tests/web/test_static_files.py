"""Static files after ``collectstatic``: content-hashed names, compressed, cached long.

Expected headers are WhiteNoise's for files with a hash in their name
(``max-age=315360000, public, immutable``, whitenoise.middleware). The test collects
one stylesheet only: compressing every app's files takes minutes on this machine.
"""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path
from typing import Any

from django.contrib.staticfiles.storage import staticfiles_storage
from django.core.management import call_command
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]


def test_collected_stylesheet_is_hashed_compressed_and_cached_for_a_year(
    tmp_path: Path, settings: Any
) -> None:
    source = tmp_path / "source"
    (source / "css").mkdir(parents=True)
    shutil.copy(ROOT / "static" / "css" / "site.css", source / "css" / "site.css")
    settings.STATICFILES_DIRS = [source]
    settings.STATICFILES_FINDERS = ["django.contrib.staticfiles.finders.FileSystemFinder"]
    settings.STATIC_ROOT = tmp_path / "collected"
    settings.WHITENOISE_USE_FINDERS = False
    call_command("collectstatic", "--noinput", verbosity=0)

    url = staticfiles_storage.url("css/site.css")
    assert re.fullmatch(r"/static/css/site\.[0-9a-f]{12}\.css", url), url
    response = Client().get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    assert "immutable" in response["Cache-Control"]
    assert "max-age=315360000" in response["Cache-Control"]
    body = gzip.decompress(b"".join(response.streaming_content))  # type: ignore[attr-defined]
    assert body == (source / "css" / "site.css").read_bytes()


def test_without_a_manifest_pages_link_plain_names(client: Client) -> None:
    html = client.get("/").content.decode()
    assert 'href="/static/css/site.css"' in html
