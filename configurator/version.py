"""The sizing engine's version, as quotes and the command line state it, and the digest
of its files that cached plans are keyed by."""

from __future__ import annotations

import hashlib
import tomllib
from functools import cache
from pathlib import Path

from django.conf import settings


@cache
def engine_version() -> str:
    """``"sizing <version>"``: the project version in ``pyproject.toml`` (what a quote's
    footer and ``manage.py size --version`` name)."""
    pyproject = Path(settings.BASE_DIR) / "pyproject.toml"
    version = tomllib.loads(pyproject.read_text("utf-8"))["project"]["version"]
    return f"sizing {version}"


@cache
def engine_digest() -> str:
    """A digest of the sizing engine's files (its code and bundled data): a plan cached by
    one build is never served by another, even in a cache the deployments share."""
    root = Path(settings.BASE_DIR) / "sizing"
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
