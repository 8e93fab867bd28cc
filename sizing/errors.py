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

import math
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


DECIMALS = {"need_gib": 2, "budget_gib": 2, "weights_gib": 1, "per_gpu_gib": 1, "usable_gib": 1}
"""Decimal places of the values that always print them (GiB figures of the GPU budget)."""


def decimals(key: str, value: float) -> int:
    """The decimal places an error sentence prints ``value`` (named ``key``) with.

    The places of :data:`DECIMALS` for its keys; else at most two, trailing zeros
    dropped (``2.5``, ``30``); a value below 0.01 keeps the digits the engine rounded
    it to (``0.001``, not ``0.00``). The English message and the page (any language)
    print the same places.
    """
    if key in DECIMALS:
        return DECIMALS[key]
    if 0 < abs(value) < 0.01:
        return len(f"{value:.6f}".rstrip("0").partition(".")[2])
    return len(f"{value:.2f}".rstrip("0").partition(".")[2])


WRITTEN_DIGITS = 24
"""An error sentence writes a number out up to this many digits before the point (an
integer exactly, as typed: never through a float); a longer one in the short form of
:func:`short_number`."""

SMALLEST_WRITTEN = 1e-6
"""A non-zero number smaller than this (in magnitude) is written in the short form of
:func:`short_number`: its places would round it to 0 (``1e-300`` ms, not ``0`` ms)."""


def scientific(value: float) -> tuple[str, int, bool] | None:
    """``value`` as an error sentence writes it short: ``(mantissa, exponent,
    approximate)`` with the mantissa in three significant digits (``("1.5", 30, False)``
    for 1.5e30), when it has more than :data:`WRITTEN_DIGITS` digits before the point or
    is a non-zero number below :data:`SMALLEST_WRITTEN`; else ``None`` (write it out,
    also ``inf`` and ``nan``). ``approximate``: an integer past a float's range, known
    by its power of ten alone (mantissa ``"1"``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    magnitude = abs(value)
    if isinstance(value, int) and abs(value) >= 10**308:
        return "-1" if value < 0 else "1", int(abs(value).bit_length() * math.log10(2)), True
    if magnitude < 10**WRITTEN_DIGITS and not 0 < magnitude < SMALLEST_WRITTEN:
        return None
    mantissa, _, exponent = f"{float(value):.3g}".partition("e")
    return mantissa, int(exponent), False


def short_number(value: float) -> str | None:
    """``value`` in the short form of :func:`scientific` (``1e+308``, ``1e-300``;
    ``about 1e+400`` past a float's range), ``inf`` or ``nan`` as such; ``None`` when it
    is written out."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value}"
    short = scientific(value)
    if short is None:
        return None
    mantissa, exponent, approximate = short
    if approximate:
        return f"about 1e+{exponent}"
    return f"{mantissa}e{exponent:+d}"


def _english_number(key: str, value: float) -> str:
    short = short_number(value)
    if short is not None:
        return short
    if isinstance(value, int) and decimals(key, value) == 0:
        return f"{value:,}"
    return f"{value:,.{decimals(key, value)}f}"


def english(values: Mapping[str, Value]) -> dict[str, Value | str]:
    """``values`` as the English messages print them: numbers grouped by three with
    commas (``10,000,000``) and the places of :func:`decimals`, a very long one short
    (:func:`short_number`), texts as given."""
    return {
        key: value if isinstance(value, str | bool) else _english_number(key, value)
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
    "context_at_most": gettext_noop("a context of at most about %(tokens)s tokens"),
    "fp8_kv_cache": gettext_noop("an FP8 KV cache (half the bytes per token)"),
    "fp8_kv_cache_short": gettext_noop("an FP8 KV cache"),
    "fp8_or_4bit_weights": gettext_noop("FP8 or 4-bit weights (more room for the KV cache)"),
    "fp8_weights": gettext_noop("FP8 weights (half the bytes): an FP8 checkpoint of the model"),
    "four_bit_weights": gettext_noop("4-bit weights (AWQ, GPTQ, NVFP4)"),
    "more_gpus_tp": gettext_noop("more GPUs per node (a larger tensor parallel size)"),
    "more_gpus": gettext_noop("more GPUs per node"),
    "larger_gpu": gettext_noop("a GPU with more memory"),
    "gpus_divide_heads": gettext_noop("a GPU count that divides the attention heads"),
    "fewer_users": gettext_noop("fewer users per node"),
    "shorter_context": gettext_noop("a shorter context"),
    "fewer_gpus": gettext_noop("fewer GPUs per node"),
    "more_nodes": gettext_noop("more nodes"),
    "fewer_new_conversations": gettext_noop("fewer new conversations per day"),
    "measured_gpu": gettext_noop(
        "a GPU with a measured prefill throughput (the plan then spans several nodes)"
    ),
    "host_memory_limit": gettext_noop(
        "a host-memory limit per node (returns beyond it are prefilled again)"
    ),
    "plan_chooses_tp": gettext_noop("let the plan choose the tensor parallel size"),
    "server_gpu": gettext_noop(
        "a server GPU (passive or blower cooling, e.g. the RTX PRO 6000 Server Edition or Max-Q)"
    ),
}
"""English template of each fix code, with its values as ``%(name)s`` (the page
translates the same template)."""

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
    "measured_gpu": "gpu",
    "host_memory_limit": "max_host_memory_gb",
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
    def template(self) -> str:
        """The English template (:data:`FIX_ENGLISH`), the page's translation key."""
        return FIX_ENGLISH[self.code]

    @property
    def text(self) -> str:
        """The English wording: the template filled with :func:`english` values."""
        return self.template % english(dict(self.values))

    @property
    def field(self) -> str:
        """The request input the fix changes."""
        return FIX_INPUTS[self.code]


class InfeasibleError(SizingError):
    """No layout holds the model and one full-length conversation.

    ``binding`` says which constraint binds; ``fixes`` lists in English what would make
    it work (more GPUs, FP8 weights, FP8 cache, a shorter context) and ``fix_notes``
    the same as :class:`Fix` codes (empty for fixes given as plain text). With
    ``names_fixes`` the English ``message`` ends with them (``": a shorter context or a
    faster GPU would fix it"``); a page shows the template alone and lists the fixes at
    their inputs.
    """

    def __init__(
        self,
        field: str,
        message: str = "",
        *,
        binding: str,
        fixes: Iterable[str | Fix],
        code: str = "",
        values: Mapping[str, Value] | None = None,
        template: str = "",
        names_fixes: bool = False,
    ) -> None:
        super().__init__(field, message, code=code, values=values, template=template)
        given = tuple(fixes)
        self.binding = binding
        self.fixes = tuple(f.text if isinstance(f, Fix) else f for f in given)
        self.fix_notes = tuple(f for f in given if isinstance(f, Fix))
        if names_fixes and self.fixes:
            *rest, last = self.fixes
            listed = f"{', '.join(rest)} or {last}" if rest else last
            self.message = f"{self.message}: {listed} would fix it"
            self.args = (self.message,)
