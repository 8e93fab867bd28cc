"""Forms of the presales workspace; each owns its validation and messages."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, cast

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from configurator.catalog.services import prices_on
from configurator.inquiries.models import Inquiry
from configurator.limits import localize_limits
from configurator.quotes.models import Language, Quote
from sizing.hardware import catalog
from sizing.search.space import LAYOUT_FIELDS as CHOICE_KEYS
from sizing.workload import (
    KV_DTYPES,
    MAX_GPUS_PER_NODE,
    MAX_HOST_MEMORY_GB,
    MAX_NEW_CONVERSATIONS_PER_DAY,
)

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


class RecommendedChoiceForm(forms.Form):
    """The recommended configuration presales start a quote from."""

    gpu = forms.ChoiceField(label=_("GPU"))
    gpus_per_node = forms.IntegerField(
        label=_("GPUs per node"), min_value=1, max_value=MAX_GPUS_PER_NODE
    )
    kv_dtype = forms.ChoiceField(label=_("KV cache"), choices=[(d, d) for d in KV_DTYPES])
    new_conversations_per_day = forms.IntegerField(
        label=_("New conversations per day"),
        min_value=0,
        max_value=MAX_NEW_CONVERSATIONS_PER_DAY,
    )
    tensor_parallel_size = forms.IntegerField(
        label=_("Tensor parallel size"), min_value=1, max_value=MAX_GPUS_PER_NODE, required=False
    )
    max_host_memory_gb = forms.IntegerField(
        label=_("Most host memory per node (GB)"),
        min_value=1,
        max_value=MAX_HOST_MEMORY_GB,
        required=False,
    )
    without_shared_tier = forms.BooleanField(label=_("No shared NFS/S3 tier"), required=False)
    without_nvme_tier = forms.BooleanField(label=_("No NVMe tier"), required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        gpu = cast(forms.ChoiceField, self.fields["gpu"])
        gpu.choices = [(slug, g.name) for slug, g in catalog.gpus().items()]

    def choice(self) -> dict[str, Any]:
        """The choice as :class:`~sizing.workload.Workload` fields (after ``is_valid``)."""
        data = self.cleaned_data
        return {key: data[key] for key in CHOICE_KEYS}


for _form in (QuoteSettingsForm, LineQuantityForm, LineAddForm, RecommendedChoiceForm):
    localize_limits(_form.base_fields.values())
