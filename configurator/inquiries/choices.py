"""Choice fields whose choices are fixed for the life of the process."""

from __future__ import annotations

import copy
from typing import Any

from django import forms


class FixedSelect(forms.Select):
    """A select whose choices are fixed for the process: each form's copy shares them.

    Django copies and re-normalises a select's choices for every form instance; for
    choices that never change per request that is wasted work on every keystroke.
    """

    def __deepcopy__(self, memo: dict[int, Any]) -> FixedSelect:
        obj = copy.copy(self)
        obj.attrs = self.attrs.copy()
        memo[id(self)] = obj
        return obj


class FixedChoiceField(forms.ChoiceField):
    """A choice field whose choices are fixed for the process (see :class:`FixedSelect`);
    nothing may change ``choices`` on a form instance."""

    widget = FixedSelect

    def __deepcopy__(self, memo: dict[int, Any]) -> FixedChoiceField:
        return forms.Field.__deepcopy__(self, memo)
