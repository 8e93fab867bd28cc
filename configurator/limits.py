"""Django's minimum and maximum validators with the limit written as the pages write
numbers: ``1,000,000`` in English, ``1.000.000`` in German (:func:`configurator.numbers.num`),
not Python's ``1000000`` or ``600000.0``.

A form field's ``min_value``/``max_value`` (and the validators a form lists itself)
give Django's :class:`~django.core.validators.MinValueValidator` and
:class:`~django.core.validators.MaxValueValidator`; :func:`localize_limits` swaps them,
once per form class, for the validators here. They refuse the same values with the same
message and code; only the limit in the message is formatted, in the language active
when the message is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import BaseValidator, MaxValueValidator, MinValueValidator

from configurator.numbers import num
from sizing.errors import decimals


class LocalNumber:
    """``value`` as :func:`configurator.numbers.num` writes it in the language active
    when it is printed, with the places of :func:`sizing.errors.decimals` (``600000.0``
    → ``600,000``; ``0.5`` → ``0.5``)."""

    def __init__(self, value: float | Decimal) -> None:
        self.value = value

    def __str__(self) -> str:
        return num(self.value, decimals("", float(self.value)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LocalNumber) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


class _LocalLimit(BaseValidator):
    def __call__(self, value: object) -> None:
        try:
            super().__call__(value)
        except ValidationError as exc:
            limit = self.limit_value() if callable(self.limit_value) else self.limit_value
            exc.params = {**(exc.params or {}), "limit_value": LocalNumber(limit)}
            raise


class LocalMinValueValidator(_LocalLimit, MinValueValidator):
    """:class:`~django.core.validators.MinValueValidator` with the limit of its message
    written as the pages write numbers."""


class LocalMaxValueValidator(_LocalLimit, MaxValueValidator):
    """:class:`~django.core.validators.MaxValueValidator` with the limit of its message
    written as the pages write numbers."""


_LOCAL = {MinValueValidator: LocalMinValueValidator, MaxValueValidator: LocalMaxValueValidator}


def localize_limits(fields: Iterable[forms.Field]) -> None:
    """Swap each of ``fields``' Django minimum and maximum validators for the one here
    with the same limit and message. Called once on a form class's fields (each form
    copies their validators)."""
    for field in fields:
        field.validators = [_local(v) for v in field.validators]


def _local(validator: Callable[[Any], None]) -> Callable[[Any], None]:
    if not isinstance(validator, BaseValidator):
        return validator
    local = _LOCAL.get(type(validator))
    return validator if local is None else local(validator.limit_value, validator.message)
