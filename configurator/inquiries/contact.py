"""The contact details of a quote request."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

from django import forms
from django.core.validators import RegexValidator
from django.utils.translation import gettext_lazy as _


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


HIDDEN_CHARACTERS = re.compile(
    r"[\x00-\x08\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
"""Control characters (C0 but tab and line breaks, DEL, C1) and the Unicode bidi marks,
embeddings, overrides and isolates (Unicode Standard Annex #9): invisible in a form, they
recolour a terminal that prints the mail or log, or reverse the text around them in the
inquiry queue, the quote PDF and the mail subject."""


def refuse_hidden_characters(value: str) -> None:
    """Raise :class:`~django.forms.ValidationError` naming the first character of
    :data:`HIDDEN_CHARACTERS` in ``value`` (as ``U+XXXX``); a validator of the contact
    fields."""
    found = HIDDEN_CHARACTERS.search(value)
    if found:
        raise forms.ValidationError(
            _("Remove the invisible control character %(code)s from this field."),
            code="hidden_character",
            params={"code": f"U+{ord(found.group()):04X}"},
        )


def visible(value: str) -> bool:
    """Whether ``value`` has a character a reader sees: not white space and not a Unicode
    format character (category ``Cf``: zero-width spaces and joiners, the word joiner,
    the byte-order mark, soft hyphens; Unicode Standard Annex #44, General_Category)."""
    return any(not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in value)


class VisibleTextField(forms.CharField):
    """A text field whose value counts as empty when a reader would see nothing in it
    (:func:`visible`), so a required one refuses a name of zero-width spaces as it
    refuses an empty one. A value with a :data:`HIDDEN_CHARACTERS` character is kept for
    the validator that names it."""

    def to_python(self, value: object) -> str:
        text = str(super().to_python(value))
        if text and not visible(text) and not HIDDEN_CHARACTERS.search(text):
            return str(self.empty_value)
        return text


PHONE = RegexValidator(
    r"^\+?[0-9 ()./-]*[0-9][0-9 ()./-]*(?:(?:ext\.?|x|Durchwahl|DW)\s*[0-9]+)?$",
    _("Enter a phone number of digits, spaces and + ( ) - . / (and ext. 12 for an extension)."),
    flags=re.IGNORECASE,
)
"""A phone number as people write it (``+49 (0)89 123-456``, ``+1 555 0100 ext. 12``)."""


MAX_NAME_CHARS = 200
"""The longest name or company a quote request takes (and a quote PDF's customer)."""


class ContactForm(forms.Form):
    """Who asks for the quote. ``website`` is a honeypot: people never see it."""

    name = VisibleTextField(
        label=_("Name"), max_length=MAX_NAME_CHARS, validators=[refuse_hidden_characters]
    )
    company = VisibleTextField(
        label=_("Company"), max_length=MAX_NAME_CHARS, validators=[refuse_hidden_characters]
    )
    email = forms.EmailField(label=_("Email"))
    phone = forms.CharField(
        label=_("Phone (optional)"),
        max_length=40,
        required=False,
        validators=[refuse_hidden_characters, PHONE],
        widget=forms.TextInput(attrs={"type": "tel", "autocomplete": "tel"}),
    )
    message = forms.CharField(
        label=_("Message"),
        max_length=5000,
        required=False,
        validators=[refuse_hidden_characters],
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
