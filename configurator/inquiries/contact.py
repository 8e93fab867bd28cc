"""The contact details of a quote request."""

from __future__ import annotations

import re
from collections.abc import Mapping

from django import forms
from django.utils.translation import gettext_lazy as _

from configurator.inquiries.field_copies import FieldTemplates


def describe_fields(fields: Mapping[str, forms.Field]) -> None:
    """Point every input at its help text and its error slot (``aria-describedby``).

    Called once on a form class's ``base_fields``: each form instance copies them.
    """
    for name, field in fields.items():
        ids = [f"id_{name}_helptext"] if field.help_text else []
        ids.append(f"id_{name}_error")
        field.widget.attrs["aria-describedby"] = " ".join(ids)


LINE_BREAKS = re.compile(r"[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+")
"""Characters that end a line (``str.splitlines``): never inside a one-line value."""


def one_line(value: str) -> str:
    """``value`` with every line break replaced by a space, so that it cannot start a
    new line in a mail header or body (a forged ``Bcc:`` line)."""
    return LINE_BREAKS.sub(" ", value).strip()


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

    def clean_name(self) -> str:
        return one_line(self.cleaned_data.get("name", ""))

    def clean_company(self) -> str:
        return one_line(self.cleaned_data.get("company", ""))

    def clean_phone(self) -> str:
        return one_line(self.cleaned_data.get("phone", ""))

    def clean_website(self) -> str:
        value: str = self.cleaned_data.get("website", "")
        if value:
            raise forms.ValidationError(_("This request looks automated and was not sent."))
        return value


describe_fields(ContactForm.base_fields)
ContactForm.base_fields = FieldTemplates(ContactForm.base_fields)
