"""Forms of the presales workspace; each owns its validation and messages."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import cast

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils.translation import gettext_lazy as _

from configurator.catalog.services import prices_on
from configurator.inquiries.models import Inquiry
from configurator.quotes.models import Language, Quote

MAX_QUANTITY = 10_000


class QuoteSettingsForm(forms.ModelForm):  # type: ignore[type-arg]  # not subscriptable at run time
    """Discount, language and notes of a draft."""

    discount_percent = forms.DecimalField(
        label=_("Discount (%)"),
        min_value=Decimal("0"),
        max_value=Decimal("100"),
        max_digits=5,
        decimal_places=2,
    )
    language = forms.ChoiceField(label=_("Language"), choices=Language.choices)

    class Meta:
        model = Quote
        fields = ["discount_percent", "language", "notes"]
        widgets = {"notes": forms.Textarea(attrs={"rows": 3})}


class LineQuantityForm(forms.Form):
    """A new quantity for one line; 0 removes the line."""

    quantity = forms.IntegerField(
        label=_("Quantity"),
        validators=[MinValueValidator(0), MaxValueValidator(MAX_QUANTITY)],
        help_text=_("0 removes the line."),
    )


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
        field.choices = [(sku, f"{sku}: {p.name}") for sku, p in sorted(prices.items())]


class InquiryStatusForm(forms.Form):
    """Move an inquiry along new → in progress → quoted → won/lost."""

    status = forms.ChoiceField(label=_("Status"), choices=Inquiry.Status.choices)
