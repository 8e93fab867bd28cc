"""Why a model could not be looked up, as a sentence for the user.

Each error carries its English ``template`` and the ``values`` that fill it (the scheme
of :mod:`sizing.errors`): the CLI and the API print the filled template, the page
translates the same template.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from sizing.errors import SizingError, Value, english, gettext_noop


class LookupFailure(StrEnum):
    """The kinds of failed lookups a page or the CLI may treat differently."""

    INVALID_ID = "invalid_id"
    NOT_FOUND = "not_found"
    GATED = "gated"
    REVISION_NOT_FOUND = "revision_not_found"
    NOT_TEXT_GENERATION = "not_text_generation"
    UNSUPPORTED_ARCHITECTURE = "unsupported_architecture"
    GGUF_ONLY = "gguf_only"
    MALFORMED_CONFIG = "malformed_config"
    WEIGHTS_UNKNOWN = "weights_unknown"
    UNREACHABLE = "unreachable"
    PENDING = "pending"
    OFFLINE = "offline"


class ModelLookupError(SizingError):
    """A model id that cannot be sized, with the reason as ``kind``.

    ``field`` is ``"model"`` for Hub lookups; uploads use ``"config"`` or
    ``"weights_gib"`` so that the form shows the message at the right input. ``code``
    defaults to the kind's value; ``template`` is the English sentence and ``values``
    the numbers and names that fill it; ``cause`` is the engine error a lookup error
    wraps, if any.
    """

    def __init__(
        self,
        kind: LookupFailure,
        *,
        template: str,
        field: str = "model",
        code: str = "",
        values: Mapping[str, Value] | None = None,
        cause: SizingError | None = None,
    ) -> None:
        super().__init__(field, code=code or kind.value, values=values, template=template)
        self.kind = kind
        self.cause = cause


class HubUnreachableError(Exception):
    """The Hub did not answer in time or could not be reached; the caller falls back.

    ``template`` is the English clause (``"the Hugging Face Hub did not answer within
    %(seconds)s s"``) and ``values`` fill it; ``str()`` is the filled clause.
    """

    def __init__(self, template: str, values: Mapping[str, Value] | None = None) -> None:
        self.template = template
        self.values = dict(values or {})
        super().__init__(template % english(self.values))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle by template and values (the negative cache keeps the error)."""
        return (type(self), (self.template, self.values))


class HubLookupPending(ModelLookupError):
    """The model is being looked up on the Hub in the background: ask again shortly."""

    def __init__(self, repo_id: str) -> None:
        super().__init__(
            LookupFailure.PENDING,
            template=gettext_noop(
                "%(model)s is being looked up on the Hugging Face Hub; try again in a few seconds"
            ),
            code="lookup_pending",
            values={"model": repo_id},
        )
        self.repo_id = repo_id
