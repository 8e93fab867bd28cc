"""The contact details of a quote request."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _


def describe_fields(form: forms.Form) -> None:
    """Point every input at its help text and its error slot (``aria-describedby``)."""
    for name, field in form.fields.items():
        ids = [f"id_{name}_helptext"] if field.help_text else []
        ids.append(f"id_{name}_error")
        field.widget.attrs["aria-describedby"] = " ".join(ids)


class ContactForm(forms.Form):
    """Who asks for the quote. ``website`` is a honeypot: people never see it."""

    name = forms.CharField(label=_("Name"), max_length=200)
    company = forms.CharField(label=_("Company"), max_length=200)
    email = forms.EmailField(label=_("Email"))
    phone = forms.CharField(
        label=_("Phone (optional)"),
        max_length=40,
        required=False,
        widget=forms.TextInput(attrs={"type": "tel", "autocomplete": "tel"}),
    )
    message = forms.CharField(
        label=_("Message"),
        max_length=5000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
    )
    consent = forms.BooleanField(label=_("I agree that my details are processed"), required=True)
    website = forms.CharField(
        label=_("Leave this field empty"),
        required=False,
        widget=forms.TextInput(attrs={"tabindex": "-1", "autocomplete": "off"}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        describe_fields(self)

    def clean_website(self) -> str:
        value: str = self.cleaned_data.get("website", "")
        if value:
            raise forms.ValidationError(_("This request looks automated and was not sent."))
        return value
