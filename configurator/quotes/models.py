"""Quotes: drafts with priced alternatives, issued quotes with a frozen snapshot."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from sizing.workload import Workload

CENT = Decimal("0.01")


def money(value: Decimal) -> Decimal:
    """Round to cents, half up (commercial rounding)."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


class QuoteStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    ISSUED = "issued", _("Issued")


class Language(models.TextChoices):
    DE = "de", _("German")
    EN = "en", _("English")


class Quote(models.Model):
    """A quote for one customer. Drafts are edited; an issued quote never changes."""

    inquiry = models.ForeignKey(
        "inquiries.Inquiry",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="quotes",
        verbose_name=_("inquiry"),
    )
    customer_name = models.CharField(_("customer"), max_length=200)
    customer_company = models.CharField(_("company"), max_length=200, blank=True)
    customer_email = models.EmailField(_("email"), blank=True)
    language = models.CharField(
        _("language"), max_length=2, choices=Language.choices, default=Language.DE
    )
    status = models.CharField(
        _("status"), max_length=8, choices=QuoteStatus.choices, default=QuoteStatus.DRAFT
    )
    number = models.CharField(_("quote number"), max_length=16, unique=True, null=True, blank=True)
    discount_percent = models.DecimalField(
        _("discount (%)"), max_digits=5, decimal_places=2, default=Decimal("0.00")
    )
    notes = models.TextField(_("notes for the customer"), blank=True)
    issued_at = models.DateTimeField(_("issued at"), null=True, blank=True)
    valid_until = models.DateField(_("valid until"), null=True, blank=True)
    engine_version = models.CharField(_("engine version"), max_length=40, blank=True)
    snapshot = models.JSONField(_("snapshot"), null=True, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="quotes",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("quote")
        verbose_name_plural = _("quotes")

    def __str__(self) -> str:
        return self.number or translation.gettext("draft #%(pk)s") % {"pk": self.pk}

    @property
    def is_issued(self) -> bool:
        return self.status == QuoteStatus.ISSUED


class QuoteAlternative(models.Model):
    """One priced configuration of a quote, shown side by side with the others."""

    quote = models.ForeignKey(Quote, on_delete=models.CASCADE, related_name="alternatives")
    position = models.PositiveSmallIntegerField(default=0)
    label = models.CharField(_("label"), max_length=200)
    inputs = models.JSONField(_("sizing inputs"))
    plan_summary = models.JSONField(_("plan summary"))

    class Meta:
        ordering = ["position", "pk"]

    def __str__(self) -> str:
        return self.label

    def label_in(self, language: str) -> str:
        """The configuration's title in ``language``, made from its sizing inputs.

        The stored ``label`` keeps the language the draft was made in; documents and
        the editor render this instead, so a quote switched to another language is
        titled in that language.
        """
        # Imported here for start-up speed: pricing loads the BOM rules (~0.3 s).
        from configurator.quotes.pricing import alternative_label

        with translation.override(language):
            return alternative_label(
                self.workload,
                nodes=int(self.plan_summary.get("nodes") or 1),
                shared_tier_tb=float(self.plan_summary.get("shared_tier_tb") or 0),
            )

    @property
    def workload(self) -> Workload:
        """The stored sizing inputs as a :class:`Workload` (rows of earlier schemas too)."""
        return Workload.from_json(self.inputs)

    def totals(self, *, discount_percent: Decimal, vat_rate: Decimal) -> dict[str, Any]:
        """Net before discount, discount, net, VAT and gross in EUR, and cost and margin."""
        lines = list(self.lines.all())
        return compute_totals(
            [(ln.quantity, ln.unit_price_eur, ln.unit_cost_eur) for ln in lines],
            discount_percent=discount_percent,
            vat_rate=vat_rate,
        )


def compute_totals(
    rows: list[tuple[int, Decimal, Decimal]], *, discount_percent: Decimal, vat_rate: Decimal
) -> dict[str, Decimal]:
    """Totals of ``(quantity, unit price EUR, unit cost EUR)`` rows, all ``Decimal`` EUR.

    The discount is a percentage of the list total; VAT is charged on the discounted net.
    """
    subtotal = sum((money(Decimal(q) * p) for q, p, _c in rows), Decimal("0.00"))
    cost = sum((money(Decimal(q) * c) for q, _p, c in rows), Decimal("0.00"))
    discount = money(subtotal * discount_percent / Decimal(100))
    net = subtotal - discount
    vat = money(net * vat_rate)
    margin = net - cost
    margin_percent = money(margin * 100 / net) if net else Decimal("0.00")
    return {
        "subtotal": subtotal,
        "discount": discount,
        "net": net,
        "vat": vat,
        "gross": net + vat,
        "cost": cost,
        "margin": margin,
        "margin_percent": margin_percent,
    }


class QuoteLine(models.Model):
    """One BOM line of an alternative with the unit price taken from the price list."""

    alternative = models.ForeignKey(
        QuoteAlternative, on_delete=models.CASCADE, related_name="lines"
    )
    position = models.PositiveSmallIntegerField(default=0)
    sku = models.CharField(_("SKU"), max_length=64)
    description = models.CharField(_("description (English)"), max_length=200)
    description_de = models.CharField(_("description (German)"), max_length=200, blank=True)
    category = models.CharField(_("category"), max_length=16)
    quantity = models.PositiveIntegerField(_("quantity"))
    unit_price_eur = models.DecimalField(_("unit price (EUR)"), max_digits=12, decimal_places=2)
    unit_cost_eur = models.DecimalField(
        _("unit cost (EUR)"), max_digits=12, decimal_places=2, default=Decimal("0.00")
    )
    why = models.CharField(_("reason (English)"), max_length=300, blank=True)
    why_de = models.CharField(_("reason (German)"), max_length=300, blank=True)
    is_manual = models.BooleanField(_("added by hand"), default=False)
    customer_provides = models.BooleanField(
        _("customer provides"),
        default=False,
        help_text=_("The customer brings this item (the shared tier): listed, not charged."),
    )

    class Meta:
        ordering = ["position", "pk"]

    def __str__(self) -> str:
        return f"{self.quantity} × {self.sku}"

    @property
    def can_be_provided(self) -> bool:
        """Whether the customer may bring this line instead of buying it (the shared
        tier's storage, ``sizing.bom.shared_storage``)."""
        return self.category == "storage"

    def description_in(self, language: str) -> str:
        """The item's name in ``language`` (``de``; anything else gives English)."""
        return self.description_de if language == "de" and self.description_de else self.description

    def why_in(self, language: str) -> str:
        """The reason for the line in ``language`` (``de``; anything else gives English)."""
        return self.why_de if language == "de" and self.why_de else self.why

    @property
    def total_eur(self) -> Decimal:
        return money(Decimal(self.quantity) * self.unit_price_eur)

    @property
    def margin_percent(self) -> Decimal:
        """(price − cost) / price in percent; 0 for an unpriced line."""
        if not self.unit_price_eur:
            return Decimal("0.00")
        return money((self.unit_price_eur - self.unit_cost_eur) * 100 / self.unit_price_eur)


class QuoteNumberCounter(models.Model):
    """The last quote number issued in a year; locked while issuing (gapless numbering)."""

    year = models.PositiveIntegerField(primary_key=True)
    last_number = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.year}: {self.last_number}"


class QuotePdf(models.Model):
    """The last PDF rendered for a quote, with the key of the content it shows.

    ``content_key`` is :func:`configurator.quotes.pdf_cache.content_key` of the document
    and the renderer (templates, stylesheet, fonts, translations); a download whose
    current key matches is served from here without rendering.
    """

    quote = models.OneToOneField(Quote, on_delete=models.CASCADE, related_name="pdf_file")
    content_key = models.CharField(max_length=64)
    pdf = models.BinaryField()
    rendered_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.quote} ({self.content_key[:12]})"
