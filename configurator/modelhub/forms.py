"""Validation of the model-search input."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class ModelSearchForm(forms.Form):
    """``q`` (or ``model``, the name of the customer form's input): part of a repo id."""

    q = forms.CharField(label=_("Model"), max_length=200, required=False, strip=True)

    def __init__(self, data: dict[str, str] | None = None) -> None:
        if data is not None and not data.get("q") and data.get("model"):
            data = {"q": data["model"]}
        super().__init__(data)
