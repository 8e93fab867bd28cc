"""Which model ids and revisions may be looked up: a Hugging Face repo id ``owner/name``
(the Hub library's rules too) and a branch, tag or commit."""

from __future__ import annotations

import re

from configurator.modelhub.errors import LookupFailure, ModelLookupError
from sizing.errors import gettext_noop
from sizing.model.spec import catalog_entry

REPO_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
"""Hugging Face repo ids: ``owner/name`` of letters, digits, ``.``, ``_`` and ``-``."""

REVISION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$")
"""Branches, tags and commits: no spaces, no ``..``, at most 200 characters."""


def validate_repo_id(repo_id: str) -> str:
    """Return ``repo_id`` stripped, or raise if it is not of the form ``owner/name``.

    ``owner/name`` of letters, digits, ``.``, ``_``, ``-``, then the Hub library's own
    rules (``huggingface_hub.utils.validate_repo_id``: no ``--`` or ``..``, no ``.git``
    at the end, at most 96 characters).

    Raises:
        ModelLookupError: on field ``model``.
    """
    value = repo_id.strip()
    if (
        not REPO_ID_RE.match(value)
        or ".." in value
        or value.endswith((".", "-"))
        or not (_hub_accepts(value))
    ):
        raise ModelLookupError(
            LookupFailure.INVALID_ID,
            template=gettext_noop(
                "%(model)r is not a Hugging Face model id of the form owner/name (for example "
                "Qwen/Qwen3-32B-FP8)"
            ),
            values={"model": repo_id},
        )
    return value


def _hub_accepts(repo_id: str) -> bool:
    """Whether the Hub library's validator accepts ``repo_id`` (catalog ids always do;
    huggingface_hub is imported only for ids that may go to the Hub)."""
    if catalog_entry(repo_id) is not None:
        return True
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id as hf_validate  # type: ignore[attr-defined]

    try:
        hf_validate(repo_id)
    except HFValidationError:
        return False
    return True


def validate_revision(revision: str | None) -> str | None:
    """Return ``revision`` stripped, ``None`` when empty, or raise if it is not a branch,
    tag or commit (:data:`REVISION_RE`, no ``..``).

    Raises:
        ModelLookupError: on field ``revision``.
    """
    value = (revision or "").strip()
    if not value:
        return None
    if not REVISION_RE.match(value) or ".." in value:
        raise ModelLookupError(
            LookupFailure.REVISION_NOT_FOUND,
            template=gettext_noop(
                "%(revision)r is not a revision: give a branch, tag or 40-digit commit"
            ),
            field="revision",
            code="invalid_revision",
            values={"revision": str(revision)},
        )
    return value
