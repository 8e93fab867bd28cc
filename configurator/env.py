"""Strict parsing of settings from the environment.

Every value may also come from a file named by ``<NAME>_FILE`` (container secrets).
Booleans accept only true/false/1/0/yes/no/on/off; anything else is an error, never a
silent default.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_str(name: str, default: str | None = None) -> str | None:
    """The value of ``name``, or of the file that ``name_FILE`` names, else ``default``.

    Raises:
        ImproperlyConfigured: if both ``name`` and ``name_FILE`` are set, or the file is
            missing.
    """
    file_var = f"{name}_FILE"
    if name in os.environ and file_var in os.environ:
        raise ImproperlyConfigured(f"set either {name} or {file_var}, not both")
    if file_var in os.environ:
        path = Path(os.environ[file_var])
        try:
            return path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{file_var}: cannot read {path}: {exc}") from exc
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    """``name`` as a boolean.

    Raises:
        ImproperlyConfigured: for a value that is not a recognised boolean.
    """
    raw = env_str(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, got {raw!r}")


def env_list(name: str, default: list[str]) -> list[str]:
    """``name`` as a comma-separated list (empty items dropped)."""
    raw = env_str(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]
