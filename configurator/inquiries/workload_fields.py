"""Form fields derived from :class:`sizing.workload.Workload`: the kind of field, its
limits and its placeholder come from the workload field's type, default and
``metadata`` (:mod:`sizing.inputs`); the page gives only the wording (label, help
text, choice labels), in the reader's language."""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from django import forms

from sizing.workload import FIELDS, Workload

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


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
