"""Form fields derived from :class:`sizing.workload.Workload`: the kind of field, its
limits and its placeholder come from the workload field's type, default and
``metadata`` (:mod:`sizing.inputs`); the page gives only the wording (label, help
text, choice labels), in the reader's language.

A value is checked by its input's declaration (:class:`DeclaredLimits`, the check the
CLI and the JSON API make), so the form refuses what they refuse with the same
sentence, translated."""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator, MaxValueValidator, MinValueValidator

from configurator.inquiries import problems
from sizing.errors import SizingError
from sizing.inputs import Input
from sizing.workload import FIELDS, INPUTS, Workload

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


class DeclaredLimits:
    """A form field's validator: the cleaned value checked against the declaration of its
    :class:`Workload` input (:meth:`sizing.inputs.Input.check`), its error worded in the
    active language (:func:`configurator.inquiries.problems.error_text`)."""

    def __init__(self, declared: Input) -> None:
        self.declared = declared

    def __call__(self, value: object) -> None:
        try:
            self.declared.check(value)
        except SizingError as exc:
            raise ValidationError(problems.error_text(exc), code=exc.code) from None


OWN_UNITS = frozenset({"active_share"})
"""Inputs whose form field takes another unit (the share in percent): Django's limits of
that unit stay."""

DJANGO_LIMITS = (MinValueValidator, MaxValueValidator, MaxLengthValidator)


def check_declared_inputs(fields: Mapping[str, forms.Field]) -> None:
    """Give each of ``fields`` (a form class's) named as a :class:`Workload` input the
    check of its declaration (:class:`DeclaredLimits`) in place of Django's minimum,
    maximum and length validators; the widget keeps its ``min``/``max`` attributes.
    Called once per form class (each form copies the validators)."""
    for name, field in fields.items():
        if name in INPUTS and name not in OWN_UNITS:
            kept = [v for v in field.validators if not isinstance(v, DJANGO_LIMITS)]
            field.validators = [*kept, DeclaredLimits(INPUTS[name])]


def declared_field(name: str, *, label: StrOrPromise) -> forms.Field:
    """A plain form field of workload field ``name`` from its declaration alone: a switch,
    a choice of the declared ``choices`` (each labelled by its value), a text, or a whole
    or decimal number with its limits, required unless the field may be ``None``. Its
    value is checked by :class:`DeclaredLimits` (also without
    :func:`check_declared_inputs`)."""
    declared = INPUTS[name]
    required = not declared.optional
    field: forms.Field
    if declared.kind is bool:
        field = forms.BooleanField(label=label, required=False)
    elif declared.choices:
        choices = [(value, value) for value in declared.choices if value]
        field = forms.ChoiceField(label=label, choices=choices, required=required)
    elif declared.kind is str:
        field = forms.CharField(label=label, required=required)
    else:
        field_class = forms.FloatField if declared.kind is float else forms.IntegerField
        field = field_class(label=label, required=required, **limits(name))
    check_declared_inputs({name: field})
    return field


def limits(name: str) -> dict[str, Any]:
    """``min_value``/``max_value`` of a form field from its :class:`Workload` field."""
    meta = FIELDS[name].metadata
    out = {}
    if "min" in meta:
        out["min_value"] = meta["min"]
    if "max" in meta:
        out["max_value"] = meta["max"]
    return out


@cache
def _kinds() -> dict[str, type]:
    """Each workload field's value type, ``None`` taken out of optional ones."""
    out = {}
    for name, hint in typing.get_type_hints(Workload).items():
        if isinstance(hint, types.UnionType):
            hint = next(h for h in typing.get_args(hint) if h is not type(None))
        out[name] = hint
    return out


def optional_field(
    name: str,
    *,
    label: StrOrPromise,
    help_text: StrOrPromise = "",
    choices: Sequence[tuple[str, StrOrPromise]] = (),
) -> forms.Field:
    """The form field of workload field ``name`` that may stay empty (then the field's
    default): a choice of ``choices`` (labels of the field's ``choices``, ``""`` for
    the default; the select lists the default once, as ``""``, and still accepts its
    own value), a whole number or a decimal number by the field's type, limited as the
    field is and showing a non-empty default as its placeholder."""
    f = FIELDS[name]
    if "choices" in f.metadata:
        given = {value for value, _label in choices}
        if given != {"", *f.metadata["choices"]}:
            raise ValueError(f"{name}: labels for {sorted(given)}, choices are {f.metadata}")
        field = forms.ChoiceField(
            label=label, help_text=help_text, choices=list(choices), required=False
        )
        # "" offers the default; its own value stays valid (a link may name it) but is
        # not listed a second time
        field.widget.choices = [(value, text) for value, text in choices if value != f.default]
        return field
    kind = _kinds()[name]
    number = kind is float
    attrs = {"inputmode": "decimal", "step": "any"} if number else {"inputmode": "numeric"}
    if f.default is not None:
        attrs["placeholder"] = f"{f.default:g}"
    field_class = forms.FloatField if number else forms.IntegerField
    return field_class(
        label=label,
        help_text=help_text,
        required=False,
        widget=forms.NumberInput(attrs=attrs),
        **limits(name),
    )
