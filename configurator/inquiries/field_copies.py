"""Each form's own copy of its class's fields, made without the generic deep copy and
only for the fields the form hands out.

Django gives every form instance ``copy.deepcopy(base_fields)``. Most fields' and
widgets' ``__deepcopy__`` copies only a few attributes (``Field.__deepcopy__``: a shallow
copy with its own widget, error messages and validators; ``Widget.__deepcopy__``: a
shallow copy with its own ``attrs``), but reaching them through :func:`copy.deepcopy`
costs more than the copies themselves, and the configurator's form is built on every
keystroke. :class:`FieldTemplates` makes the same copies directly for fields and widgets
whose ``__deepcopy__`` is one of those; any other field or widget is deep-copied by its
own ``__deepcopy__`` as before.

A form's ``fields`` (:class:`FieldCopies`) copies a field when it is first read from
it: a form whose fields are only cleaned (the live estimate) reads the class's field
through :meth:`FieldCopies.current`, which is what the copy would be, and copies none.

A copy's lazily translated help text is the text in the language active when the form
is made (each form lives within one request): read once per language and process, not
once per field and form (Django's bound field reads it to test whether there is one).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, MutableMapping
from typing import Any, ClassVar, TypeVar

from django import forms
from django.utils.functional import Promise
from django.utils.translation import get_language

from configurator.formdata import posted_value
from configurator.inquiries.choices import FixedChoiceField, FixedSelect

T = TypeVar("T")

_PLAIN_FIELD_COPIES = frozenset({forms.Field.__deepcopy__, FixedChoiceField.__deepcopy__})
"""``__deepcopy__`` methods that copy a field as ``Field.__deepcopy__`` does."""
_PLAIN_WIDGET_COPIES = frozenset({forms.Widget.__deepcopy__, FixedSelect.__deepcopy__})
"""``__deepcopy__`` methods that copy a widget as ``Widget.__deepcopy__`` does."""


def _shallow(obj: T) -> T:
    """What :func:`copy.copy` makes of a plain object: a new instance sharing the values
    of ``obj``'s attributes."""
    new: T = type(obj).__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    return new


def field_copy(field: forms.Field, memo: dict[int, Any]) -> forms.Field:
    """The copy of ``field`` that ``copy.deepcopy(field, memo)`` makes, made directly when
    the field and its widget copy themselves as Django's ``Field`` and ``Widget`` do."""
    if type(field).__deepcopy__ not in _PLAIN_FIELD_COPIES:
        return copy.deepcopy(field, memo)
    result = _shallow(field)
    memo[id(field)] = result
    widget = field.widget
    if type(widget).__deepcopy__ in _PLAIN_WIDGET_COPIES:
        widget_copy = _shallow(widget)
        widget_copy.attrs = widget.attrs.copy()
        memo[id(widget)] = widget_copy
        result.widget = widget_copy
    else:
        result.widget = copy.deepcopy(widget, memo)
    result.error_messages = field.error_messages.copy()
    result.validators = field.validators[:]
    return result


class FieldCopies(MutableMapping[str, forms.Field]):
    """A form's ``fields``: the class's fields in their order, each copied (with its help
    text in the form's language) when first read, and any field set on the form.

    :meth:`current` answers without copying; reading, iterating the values or items, or
    setting a field behaves as on the plain dict of copies Django makes.
    """

    __slots__ = ("_fields", "_help_texts", "_templates")

    def __init__(self, templates: FieldTemplates, help_texts: dict[str, str]) -> None:
        self._templates = templates
        self._help_texts = help_texts
        # each name's own copy, or None while the field is the class's unread one
        self._fields: dict[str, forms.Field | None] = dict.fromkeys(templates)

    def __getitem__(self, name: str) -> forms.Field:
        field = self._fields[name]
        if field is None:
            field = field_copy(self._templates[name], {})
            text = self._help_texts.get(name)
            if text is not None:
                field.help_text = text
            self._fields[name] = field
        return field

    def current(self, name: str) -> forms.Field:
        """The field ``name`` as the form has it now, without copying: its own copy once
        made or set, else the class's field (equal to that copy but for a lazy help
        text). For reading only.

        Raises:
            KeyError: the form has no field ``name``.
        """
        field = self._fields[name]
        return self._templates[name] if field is None else field

    def visible(self) -> list[str]:
        """The names of the fields whose widget is not hidden, in order (the names of
        ``self.items()`` with ``not field.widget.is_hidden``, without copying)."""
        hidden = self._templates.hidden()
        return [
            name
            for name, own in self._fields.items()
            if not (name in hidden if own is None else own.widget.is_hidden)
        ]

    def __setitem__(self, name: str, field: forms.Field) -> None:
        self._fields[name] = field

    def __delitem__(self, name: str) -> None:
        del self._fields[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __contains__(self, name: object) -> bool:
        return name in self._fields

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self._fields)})"


class FieldTemplates(dict[str, forms.Field]):
    """A form class's ``base_fields`` whose deep copy (a form instance's ``fields``) is a
    :class:`FieldCopies` of them, in the same order, with the lazy help texts in the
    active language (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._help_texts: dict[str | None, dict[str, str]] = {}
        self._memos: dict[frozenset[type[forms.Field]], dict[str, dict[Any, Any]]] = {}
        self._hidden: frozenset[str] | None = None

    def hidden(self) -> frozenset[str]:
        """The names of the fields whose widget is hidden (made once: a class's fields
        keep their widgets)."""
        if self._hidden is None:
            self._hidden = frozenset(n for n, f in self.items() if f.widget.is_hidden)
        return self._hidden

    def memos(self, pure_types: frozenset[type[forms.Field]]) -> dict[str, dict[Any, Any]]:
        """Each field's remembered inputs and their cleaned values, for the fields of
        ``pure_types`` (exactly) that are not localized (:class:`CopiedFieldsForm`)."""
        memos = self._memos.get(pure_types)
        if memos is None:
            memos = self._memos[pure_types] = {
                name: {}
                for name, field in self.items()
                if type(field) in pure_types and not field.localize
            }
        return memos

    def __deepcopy__(self, memo: dict[int, Any]) -> FieldCopies:
        language = get_language()
        texts = self._help_texts.get(language)
        if texts is None:
            texts = {
                name: str(field.help_text)
                for name, field in self.items()
                if isinstance(field.help_text, Promise)
            }
            self._help_texts[language] = texts
        return FieldCopies(self, texts)


_PLAIN_BOUND_CLEAN = forms.Field._clean_bound_field  # type: ignore[attr-defined]
"""How most fields clean a bound field's value: ``clean(bf.data)`` (``FileField`` passes
the initial value too)."""
_FILE_BOUND_CLEAN = forms.FileField._clean_bound_field  # type: ignore[attr-defined]
"""How a file field cleans a bound field's value: ``clean(bf.data, bf.initial)``."""
_KNOWN_BOUND_CLEANS = frozenset({_PLAIN_BOUND_CLEAN, _FILE_BOUND_CLEAN})
_PLAIN_DATA_VALUE = forms.Widget.value_from_datadict
"""How most widgets read their value: ``data.get(name)``."""
_MEMO_KEYS = (str, bool, type(None))
"""Types of the inputs whose cleaned value is remembered: posted text, a checkbox's
``bool``, ``None`` for a missing input (no two such inputs are equal)."""

_UNCLEANED = object()
"""A memo's answer for an input it has not cleaned yet."""

MAX_REMEMBERED_CHARS = 64
"""The longest input whose cleaned value a field remembers (numbers, ids, choices)."""
MAX_REMEMBERED_INPUTS = 256
"""How many inputs a field remembers; then it starts over."""

PURE_FIELD_TYPES: frozenset[type[forms.Field]] = frozenset(
    {forms.BooleanField, forms.CharField, forms.FloatField, forms.IntegerField, FixedChoiceField}
)
"""Field classes whose ``clean`` depends on the input alone (no locale, clock or data
beyond the field's fixed limits and choices) when the field is not localized."""


class CopiedFieldsForm(forms.BaseForm):
    """A form whose ``fields`` are a :class:`FieldCopies`: it cleans each field as
    Django's ``BaseForm._clean_fields`` does, but reads a field that cleans its value as
    ``Field`` does from :meth:`FieldCopies.current`, without a copy or a bound field.

    A class's field of :attr:`pure_field_types` that is not localized remembers the
    cleaned value of each input it took (:data:`MAX_REMEMBERED_INPUTS`, inputs of up to
    :data:`MAX_REMEMBERED_CHARS` characters): the same input cleans to the same value
    without cleaning it again. An input that fails to clean is cleaned each time (its
    error is the form's own).
    """

    pure_field_types: ClassVar[frozenset[type[forms.Field]]] = PURE_FIELD_TYPES
    """Field classes whose cleaned values may be remembered (:data:`PURE_FIELD_TYPES`)."""

    def _clean_fields(self) -> None:
        fields = self.fields
        if not isinstance(fields, FieldCopies):
            for name in fields:
                self._clean_bound(name)
            return
        templates = fields._templates
        memos = templates.memos(self.pure_field_types)
        data = self.data
        prefixed = bool(self.prefix)
        for name, own in fields._fields.items():
            field = templates[name] if own is None else own
            bound_clean = type(field)._clean_bound_field  # type: ignore[attr-defined]
            if field.disabled or bound_clean not in _KNOWN_BOUND_CLEANS:
                self._clean_bound(name)
                continue
            html_name = self.add_prefix(name) if prefixed else name
            try:
                if type(field.widget).value_from_datadict is _PLAIN_DATA_VALUE:
                    raw = posted_value(data, html_name)  # data.get(html_name)
                else:
                    raw = field.widget.value_from_datadict(data, self.files, html_name)
                memo = memos.get(name) if own is None else None
                if bound_clean is _FILE_BOUND_CLEAN:
                    initial = self.get_initial_for_field(field, name)
                    self.cleaned_data[name] = field.clean(raw, initial)  # type: ignore[call-arg]
                elif (
                    memo is None
                    or type(raw) not in _MEMO_KEYS
                    or (type(raw) is str and len(raw) > MAX_REMEMBERED_CHARS)
                ):
                    self.cleaned_data[name] = field.clean(raw)
                else:
                    value = memo.get(raw, _UNCLEANED)  # one read: other threads share the memo
                    if value is _UNCLEANED:
                        value = field.clean(raw)
                        if len(memo) >= MAX_REMEMBERED_INPUTS:
                            memo.clear()
                        memo[raw] = value
                    self.cleaned_data[name] = value
                if hasattr(self, f"clean_{name}"):
                    self.cleaned_data[name] = getattr(self, f"clean_{name}")()
            except forms.ValidationError as exc:
                self.add_error(name, exc)

    def _clean_bound(self, name: str) -> None:
        """Clean field ``name`` through its bound field, as Django does."""
        try:
            bound = self[name]
            self.cleaned_data[name] = bound.field._clean_bound_field(bound)  # type: ignore[attr-defined]
            if hasattr(self, f"clean_{name}"):
                self.cleaned_data[name] = getattr(self, f"clean_{name}")()
        except forms.ValidationError as exc:
            self.add_error(name, exc)
