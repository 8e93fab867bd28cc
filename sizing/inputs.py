"""How a customer input is declared, and the one check of a value against its limits.

An input is one dataclass field with its default, its English description and its
limits in ``metadata`` (:func:`input_field`). Keys: ``help`` (English description),
``label`` (the input as its error sentences name it, an English translation key),
``min``/``max`` (inclusive), ``exclusive_min``, ``min_length``/``max_length`` for
text, ``choices``.

:func:`declared_inputs` reads such a dataclass into :class:`Input` objects, and
:meth:`Input.check` is the one place a value is checked against the declared type and
limits: the sizing engine's own validation, the configurator form's field validators,
the CLI's argument types and the JSON API's schema all call it, so a value out of range
is refused everywhere with the same sentence (its template marked for translation, so
the page words it in the reader's language). The surfaces read the metadata for
everything else too: the form's limits, the CLI's flags and help, the API's schema
(``docs/adding-an-input.md``).
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sizing.errors import SizingError, Value, gettext_noop

MAX_TOKENS = 10_000_000
"""The most tokens any token count of a workload may be (a conversation's context, the
shared prompt, one turn's prompt or answer): a sanity bound, far above any model's
``max_position_embeddings``."""

QUOTED_CHARS = 40
"""A refused text is quoted in an error up to this many characters, then cut with ``…``
(a request may send a megabyte in one field)."""

INPUT_ERRORS = {
    "between": gettext_noop("%(input)s must be between %(min)s and %(max)s, got %(got)s"),
    "above_at_most": gettext_noop(
        "%(input)s must be above %(min)s and at most %(max)s, got %(got)s"
    ),
    "at_least": gettext_noop("%(input)s must be at least %(min)s, got %(got)s"),
    "at_most": gettext_noop("%(input)s must be at most %(max)s, got %(got)s"),
    "one_of": gettext_noop("%(input)s must be one of %(known)s, got %(got)s"),
    "length_between": gettext_noop(
        "%(input)s must be %(min)s to %(max)s characters long, got %(got)s"
    ),
    "length_at_most": gettext_noop(
        "%(input)s must be at most %(max)s characters long, got %(got)s"
    ),
    "whole_number": gettext_noop("%(input)s must be a whole number, got %(got)s"),
    "number": gettext_noop("%(input)s must be a number, got %(got)s"),
    "switch": gettext_noop("%(input)s must be true or false, got %(got)s"),
    "text": gettext_noop("%(input)s must be text, got %(got)s"),
    "required": gettext_noop("%(input)s is required"),
    "unknown": gettext_noop("%(input)s is not an input of this request"),
}
"""The English sentence of each way a value breaks its input's declaration (the key is
the error's ``code``); ``input`` is the input's ``label``, which the page translates as
well, ``got`` the value as given."""

KIND_CODES = {int: "whole_number", float: "number", bool: "switch", str: "text"}
"""The error code of a value of the wrong type, by the input's type."""

SWITCH_WORDS = {
    "true": True,
    "1": True,
    "yes": True,
    "on": True,
    "false": False,
    "0": False,
    "no": False,
    "off": False,
}
"""The words a switch input is written as on a command line or in a query string."""


def input_field(
    default: object = dataclasses.MISSING, *, help: str, label: str, **limits: object
) -> Any:  # a dataclass field stands in for the default of any field's type
    """A dataclass field for one input, with ``help``, ``label`` and ``limits`` in its
    ``metadata`` (the keys of the module docstring)."""
    return dataclasses.field(default=default, metadata={"help": help, "label": label, **limits})


def quoted(value: object) -> Value:
    """A refused value as an error quotes it: a finite number as such (formatted per
    language), anything else as its ``repr``, cut after :data:`QUOTED_CHARS`
    characters."""
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
        return value
    text = repr(value)
    return text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 1] + "…"


@dataclass(frozen=True)
class Input:
    """One declared input: its name, type, default, wording and limits.

    Attributes:
        name: the dataclass field's name (``users``).
        kind: its value type without ``None``: ``int``, ``float``, ``bool`` or ``str``.
        optional: ``None`` is a value (the type is ``X | None``).
        default: the field's default, :data:`dataclasses.MISSING` when required.
        help: the English description (CLI help, API schema).
        label: the input as its errors name it (English; the page translates it).
        limits: the field's other ``metadata``: ``min``, ``max``, ``exclusive_min``,
            ``min_length``, ``max_length``, ``choices``.
    """

    name: str
    kind: type
    optional: bool
    default: object
    help: str
    label: str
    limits: Mapping[str, Any]

    @property
    def required(self) -> bool:
        """The input has no default."""
        return self.default is dataclasses.MISSING

    @property
    def choices(self) -> tuple[str, ...]:
        """The values a choice input takes (``()``: not a choice)."""
        return tuple(self.limits.get("choices", ()))

    def error(self, code: str, **values: Value) -> SizingError:
        """The :class:`SizingError` of case ``code`` (a key of :data:`INPUT_ERRORS`) on this
        input, its sentence filled with ``values`` and the input's label."""
        return SizingError(
            self.name,
            template=INPUT_ERRORS[code],
            code=code,
            values={"input": self.label, **values},
        )

    def parse(self, text: str) -> object:
        """The value ``text`` writes for this input, as a command line or a query string
        gives it: a whole number, a number, ``true``/``false`` (also ``1``/``0``,
        ``yes``/``no``, ``on``/``off``) or the text itself; ``""`` is ``None`` for an
        optional input. The value is not checked against the limits (:meth:`check`).

        Raises:
            SizingError: on :attr:`name`, when ``text`` is not of the input's type.
        """
        if text == "" and self.optional:
            return None
        if self.kind is str:
            return text
        if self.kind is bool:
            word = text.strip().lower()
            if word in SWITCH_WORDS:
                return SWITCH_WORDS[word]
        else:
            try:
                return self.kind(text.strip())
            except ValueError:
                pass
        raise self.error(KIND_CODES[self.kind], got=quoted(text))

    def check(self, value: object) -> None:
        """Check ``value`` against this input's type and declared limits.

        A whole number is no ``bool``; a number for a ``float`` input may be an ``int``;
        ``NaN`` and infinities are out of every range; ``None`` passes only an optional
        input.

        Raises:
            SizingError: on :attr:`name`, with the ``code`` of :data:`INPUT_ERRORS` and
                the English sentence filled (``users must be between 1 and 1,000,000,
                got 0``).
        """
        if value is None:
            if self.optional:
                return
            raise self.error("required" if self.required else KIND_CODES[self.kind], got="None")
        if not _of_kind(value, self.kind):
            raise self.error(KIND_CODES[self.kind], got=quoted(value))
        if isinstance(value, str):
            self._check_text(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            self._check_number(value)

    def _check_text(self, value: str) -> None:
        choices = self.choices
        if choices and value not in choices:
            known = ", ".join(c for c in choices if c)
            raise self.error("one_of", known=known, got=quoted(value))
        low: int = self.limits.get("min_length", 0)
        high: int | None = self.limits.get("max_length")
        if high is not None and not low <= len(value) <= high:
            code = "length_between" if low else "length_at_most"
            raise self.error(code, min=low, max=high, got=quoted(value))

    def _check_number(self, value: float) -> None:
        low: float | None = self.limits.get("min")
        high: float | None = self.limits.get("max")
        above: float | None = self.limits.get("exclusive_min")
        if (
            not (isinstance(value, float) and math.isnan(value))
            and (low is None or value >= low)
            and (above is None or value > above)
            and (high is None or value <= high)
        ):
            return
        raise self.out_of_range(quoted(value))

    def out_of_range(self, got: Value) -> SizingError:
        """The error of a number outside this input's limits, quoting ``got`` as given
        (a number, or a text such as ``about 1e+4999`` for one too long to read); for a
        text or switch input, the error of a value of the wrong type."""
        low: float | None = self.limits.get("min")
        high: float | None = self.limits.get("max")
        above: float | None = self.limits.get("exclusive_min")
        if self.kind not in (int, float):
            return self.error(KIND_CODES[self.kind], got=got)
        if above is not None and high is not None:
            return self.error("above_at_most", min=above, max=high, got=got)
        if low is not None and high is not None:
            return self.error("between", min=low, max=high, got=got)
        if high is not None:
            return self.error("at_most", max=high, got=got)
        floor = low if above is None else above
        return self.error("at_least", min=0 if floor is None else floor, got=got)


def _of_kind(value: object, kind: type) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind is float:
        return isinstance(value, int | float)
    return isinstance(value, kind)


def declared_inputs(cls: type) -> dict[str, Input]:
    """The inputs of dataclass ``cls`` (every field declared with :func:`input_field`),
    by name, in field order.

    Raises:
        TypeError: a field without ``help`` and ``label``, of a type other than
            ``int``, ``float``, ``bool``, ``str`` (each optionally ``| None``), or with
            a ``min_length`` but no ``max_length``.
    """
    hints = typing.get_type_hints(cls)
    out = {}
    for f in dataclasses.fields(cls):
        kind, optional = hints[f.name], False
        if isinstance(kind, types.UnionType):
            args = [a for a in typing.get_args(kind) if a is not type(None)]
            kind, optional = args[0], len(args) < len(typing.get_args(kind))
        if (
            kind not in KIND_CODES
            or "label" not in f.metadata
            or ("min_length" in f.metadata and "max_length" not in f.metadata)
        ):
            raise TypeError(f"{cls.__name__}.{f.name}: not an input declared with input_field")
        limits = {k: v for k, v in f.metadata.items() if k not in ("help", "label")}
        out[f.name] = Input(
            name=f.name,
            kind=kind,
            optional=optional,
            default=f.default,
            help=f.metadata["help"],
            label=f.metadata["label"],
            limits=limits,
        )
    return out


def check_inputs(instance: object, inputs: Mapping[str, Input]) -> None:
    """Check each of ``inputs`` on dataclass ``instance`` (:meth:`Input.check`), in order.

    Raises:
        SizingError: naming the first input whose value breaks its declaration.
    """
    for name, declared in inputs.items():
        declared.check(getattr(instance, name))
