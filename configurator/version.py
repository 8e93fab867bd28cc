"""The sizing engine's version, as quotes and the command line state it."""

from __future__ import annotations

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
