"""Exceptions the sizing engine raises, each saying which input is wrong and why.

Every error carries an English ``message`` (CLI, JSON API) and, where the engine knows
the case, a machine-readable ``code`` with the numbers the sentence quotes in
``values``, so that a page can word it in the reader's language (the same scheme as
:class:`sizing.verdict.Note`). An error raised with a ``template`` keeps its English
there, once: ``message`` is the template filled with :func:`english` values, and a page
looks the same template up as its translation key (the German catalog holds it as a
msgid) and fills it with the values formatted for its language. Source of the scheme:
issue 5 (German and English pages, numbers formatted per language) and issue 11 item 6
(the English wording of an error in one place).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

Value = int | float | str
"""A number or short text an error sentence quotes."""


def gettext_noop(template: str) -> str:
    """``template`` unchanged: marks an English error template as a translation key.

    The name is the marker ``makemessages`` (xgettext) extracts, so the page's catalogs
    list the template; ``sizing`` itself imports no Django.
    """
    return template


def english(values: Mapping[str, Value]) -> dict[str, Value | str]:
    """``values`` as the English messages print them: numbers grouped by three with
    commas (``10,000,000``, Python's ``{:,}``), texts as given."""
    return {
        key: value if isinstance(value, str | bool) else f"{value:,}"
        for key, value in values.items()
    }


def _pairs(values: Mapping[str, Value] | None) -> tuple[tuple[str, Value], ...]:
    return tuple((values or {}).items())


class SizingError(ValueError):
    """Base class: an input that the engine cannot size, with a message for the user.

    ``field`` names the input: a :class:`sizing.workload.Workload` field
    (``"context_tokens"``) or a model input (``"config.num_key_value_heads"``),
    so that a form can show the message at that field and a CLI can name the flag.
    ``code`` (``""`` when none) names the case and ``values`` its numbers by name.
    ``template`` (``""`` when none) is the English sentence with ``%(name)s`` slots
    for ``values``; given, ``message`` is left out and is the template filled with
    :func:`english` values.
    """

    def __init__(
        self,
        field: str,
        message: str = "",
        *,
        code: str = "",
        values: Mapping[str, Value] | None = None,
        template: str = "",
    ) -> None:
        if template:
            message = template % english(values or {})
        super().__init__(message)
        self.field = field
        self.message = message
        self.code = code
        self.values = _pairs(values)
        self.template = template

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle by state, so that subclasses with other constructors survive a cache."""
        return (_restore_error, (type(self), dict(self.__dict__)))


def _restore_error(cls: type[SizingError], state: dict[str, Any]) -> SizingError:
    """A pickled :class:`SizingError` (of class ``cls``) from its attributes."""
    error = cls.__new__(cls)
    ValueError.__init__(error, state.get("message", ""))
    error.template = ""
    error.__dict__.update(state)
    return error


class ConfigError(SizingError):
    """A model's ``config.json`` lacks a field the architecture needs, or holds a bad value."""


FIX_ENGLISH = {
    "context_at_most": "a context of at most about {tokens:,} tokens",
    "fp8_kv_cache": "an FP8 KV cache (half the bytes per token)",
    "fp8_kv_cache_short": "an FP8 KV cache",
    "fp8_or_4bit_weights": "FP8 or 4-bit weights (more room for the KV cache)",
    "fp8_weights": "FP8 weights (half the bytes)",
    "four_bit_weights": "4-bit weights (AWQ, GPTQ, NVFP4)",
    "more_gpus_tp": "more GPUs per node (a larger tensor parallel size)",
    "more_gpus": "more GPUs per node",
    "larger_gpu": "a GPU with more memory",
    "gpus_divide_heads": "choose a GPU count that divides the attention heads",
    "fewer_users": "fewer users per node",
    "shorter_context": "a shorter context",
    "fewer_gpus": "fewer GPUs per node",
    "more_nodes": "more nodes",
    "fewer_new_conversations": "fewer new conversations per day",
    "longer_ttft_p95": "a longer TTFT p95 target",
    "longer_tpot": "a longer TPOT target",
    "faster_gpu": "a faster GPU",
    "plan_chooses_tp": "let the plan choose the tensor parallel size",
    "server_gpu": "a server GPU (passive or blower cooling, e.g. the RTX PRO 6000 Server "
    "Edition or Max-Q)",
}
"""English wording of each fix code."""

FIX_INPUTS = {
    "context_at_most": "context_tokens",
    "fp8_kv_cache": "kv_dtype",
    "fp8_kv_cache_short": "kv_dtype",
    "fp8_or_4bit_weights": "model",
    "fp8_weights": "model",
    "four_bit_weights": "model",
    "more_gpus_tp": "gpus_per_node",
    "more_gpus": "gpus_per_node",
    "larger_gpu": "gpu",
    "gpus_divide_heads": "gpus_per_node",
    "fewer_users": "users",
    "shorter_context": "context_tokens",
    "fewer_gpus": "gpus_per_node",
    "more_nodes": "users",
    "fewer_new_conversations": "new_conversations_per_day",
    "longer_ttft_p95": "ttft_p95_ms",
    "longer_tpot": "tpot_ms",
    "faster_gpu": "gpu",
    "plan_chooses_tp": "tensor_parallel_size",
    "server_gpu": "gpu",
}
"""The request input each fix changes (a field name of :class:`SizingError`)."""


@dataclass(frozen=True)
class Fix:
    """One change that would make an infeasible request fit, as a code with its numbers.

    Attributes:
        code: a key of :data:`FIX_ENGLISH`.
        values: the numbers the sentence quotes, by name.
    """

    code: str
    values: tuple[tuple[str, Value], ...] = ()

    @property
    def text(self) -> str:
        """The English wording."""
        return FIX_ENGLISH[self.code].format(**dict(self.values))

    @property
    def field(self) -> str:
        """The request input the fix changes."""
        return FIX_INPUTS[self.code]


class InfeasibleError(SizingError):
    """No layout holds the model and one full-length conversation.

    ``binding`` says which constraint binds; ``fixes`` lists in English what would make
    it work (more GPUs, FP8 weights, FP8 cache, a shorter context) and ``fix_notes``
    the same as :class:`Fix` codes (empty for fixes given as plain text).
    """

    def __init__(
        self,
        field: str,
        message: str,
        *,
        binding: str,
        fixes: Iterable[str | Fix],
        code: str = "",
        values: Mapping[str, Value] | None = None,
    ) -> None:
        super().__init__(field, message, code=code, values=values)
        given = tuple(fixes)
        self.binding = binding
        self.fixes = tuple(f.text if isinstance(f, Fix) else f for f in given)
        self.fix_notes = tuple(f for f in given if isinstance(f, Fix))
