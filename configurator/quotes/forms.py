"""Forms of the presales workspace; each owns its validation and messages."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, cast

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils.functional import lazy
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from configurator.catalog.services import prices_on
from configurator.inquiries.models import Inquiry
from configurator.inquiries.workload_fields import declared_field
from configurator.limits import localize_limits
from configurator.quotes.models import Language, Quote
from sizing.hardware import catalog
from sizing.search.space import LAYOUT_FIELDS as CHOICE_KEYS

MAX_QUANTITY = 10_000
MAX_DISCOUNT_PERCENT = Decimal("50")
"""Highest discount presales may give on the list total (house rule)."""
MAX_NOTES_CHARS = 1500
"""Longest note for the customer: about a third of an A4 page in the PDF's terms."""


class QuoteSettingsForm(forms.ModelForm):  # type: ignore[type-arg]  # not subscriptable at run time
    """Discount, language and notes of a draft."""

    discount_percent = forms.DecimalField(
        label=_("Discount (%)"),
        min_value=Decimal("0"),
        max_value=MAX_DISCOUNT_PERCENT,
        max_digits=5,
        decimal_places=2,
        help_text=_("0 to 50 % of the list total."),
    )
    language = forms.ChoiceField(label=_("Language"), choices=Language.choices)
    notes = forms.CharField(
        label=_("Notes for the customer"),
        required=False,
        max_length=MAX_NOTES_CHARS,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("At most 1,500 characters; printed in full in the PDF's terms."),
    )

    class Meta:
        model = Quote
        fields = ["discount_percent", "language", "notes"]


class LineQuantityForm(forms.Form):
    """A new quantity for one line; 0 removes the line, but only when confirmed."""

    quantity = forms.IntegerField(
        label=_("Quantity"),
        validators=[MinValueValidator(0), MaxValueValidator(MAX_QUANTITY)],
        help_text=_("0 removes the line."),
    )
    confirm_remove = forms.BooleanField(label=_("Remove the line"), required=False)

    def clean(self) -> dict[str, object]:
        data = cast(dict[str, object], super().clean())
        if data.get("quantity") == 0 and not data.get("confirm_remove"):
            self.add_error(
                "quantity",
                _("Quantity 0 removes the line: tick “Remove the line” to confirm."),
            )
        return data

    @property
    def asks_removal(self) -> bool:
        """Whether the form was refused only for want of the removal confirmation."""
        return self.data.get("quantity") == "0" and "confirm_remove" not in self.data


class IssueForm(forms.Form):
    """Issuing; a quote that falls short of its sizing plan needs the acknowledgement."""

    accept_deviations = forms.BooleanField(label=_("Issue despite the deviations"), required=False)


class LineAddForm(forms.Form):
    """A price-list item to add to an alternative."""

    sku = forms.ChoiceField(label=_("Item"))
    quantity = forms.IntegerField(
        label=_("Quantity"), validators=[MinValueValidator(1), MaxValueValidator(MAX_QUANTITY)]
    )

    def __init__(self, *args: object, day: dt.date, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        prices = prices_on(day)
        field = cast(forms.ChoiceField, self.fields["sku"])
        language = get_language() or "en"
        field.choices = [
            (sku, f"{sku}: {p.display_name(language[:2])}") for sku, p in sorted(prices.items())
        ]


class InquiryStatusForm(forms.Form):
    """Move an inquiry along new → in progress → quoted → won/lost."""

    status = forms.ChoiceField(label=_("Status"), choices=Inquiry.Status.choices)


def _column_label(name: str) -> str:
    """The (translated) name of the inquiry's column ``name``, capitalised."""
    field = Inquiry._meta.get_field(name)
    label = str(getattr(field, "verbose_name", name))
    return label[:1].upper() + label[1:]


class RecommendedChoiceForm(forms.Form):
    """The recommended configuration presales start a quote from: one field per layout
    field (:data:`~sizing.search.space.LAYOUT_FIELDS`), built from its
    :class:`~sizing.workload.Workload` declaration and labelled as the inquiry's column
    (:func:`configurator.inquiries.workload_fields.declared_field`); the GPU is any the
    catalog knows."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        gpu = forms.ChoiceField(label=self.fields["gpu"].label)
        gpu.choices = [(slug, g.name) for slug, g in catalog.gpus().items()]
        self.fields["gpu"] = gpu

    def choice(self) -> dict[str, Any]:
        """The choice as :class:`~sizing.workload.Workload` fields (after ``is_valid``)."""
        data = self.cleaned_data
        return {key: data[key] for key in CHOICE_KEYS}


RecommendedChoiceForm.base_fields = {
    name: declared_field(name, label=lazy(_column_label, str)(name)) for name in CHOICE_KEYS
}


for _form in (QuoteSettingsForm, LineQuantityForm, LineAddForm):
    localize_limits(_form.base_fields.values())
