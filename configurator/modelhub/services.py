"""Resolve a model id to a :class:`sizing.model.ModelSpec`.

The offline catalog bundled with the sizing engine answers first; further sources
(the database cache of Hub lookups, the Hub itself) are added in this module.
"""

from __future__ import annotations

import re

from sizing.errors import SizingError
from sizing.model import ModelSpec, catalog_entry, from_catalog

REPO_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
"""Hugging Face repo ids: ``owner/name`` of letters, digits, ``.``, ``_`` and ``-``."""


def validate_repo_id(repo_id: str) -> str:
    """Return ``repo_id`` stripped, or raise if it is not of the form ``owner/name``.

    Raises:
        SizingError: on field ``model``.
    """
    value = repo_id.strip()
    if not REPO_ID_RE.match(value) or ".." in value or value.endswith((".", "-")):
        raise SizingError(
            "model",
            f"'{repo_id}' is not a Hugging Face model id of the form "
            "owner/name (for example Qwen/Qwen3-32B-FP8)",
        )
    return value


def model_resolve(repo_id: str, *, revision: str | None = None) -> ModelSpec:
    """The model spec for ``repo_id``.

    Raises:
        SizingError: on field ``model`` when the id is malformed or the model unknown.
    """
    value = validate_repo_id(repo_id)
    if catalog_entry(value) is not None:
        return from_catalog(value)
    raise SizingError("model", f"unknown model '{value}': it is not in the offline catalog")
