"""The price list: one row per SKU and valid-from date, prices in EUR as ``Decimal``."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.db import models
from django.utils.translation import gettext_lazy as _


class Category(models.TextChoices):
    CHASSIS = "chassis", _("Chassis")
    CPU = "cpu", _("CPU")
    DIMM = "dimm", _("Memory")
    GPU = "gpu", _("GPU")
    BRIDGE = "bridge", _("NVLink bridge")
    NVME = "nvme", _("NVMe drive")
    BOOT = "boot", _("Boot drive")
    NIC = "nic", _("Network")
    PSU = "psu", _("Power supply")
    SERVICE = "service", _("Service")
    STORAGE = "storage", _("Shared storage")
    OTHER = "other", _("Other")


class PriceQuerySet(models.QuerySet["Price"]):
    def valid_on(self, day: dt.date) -> PriceQuerySet:
        """Rows in force on ``day``: per SKU, the latest ``valid_from`` not after it."""
        return self.filter(valid_from__lte=day).order_by("sku", "-valid_from")

    def current_by_sku(self, day: dt.date) -> dict[str, Price]:
        """The price in force on ``day`` for every SKU that has one."""
        out: dict[str, Price] = {}
        for row in self.valid_on(day):
            out.setdefault(row.sku, row)
        return out


class Price(models.Model):
    """The price of one SKU from ``valid_from`` on (until a later row for the SKU)."""

    sku = models.CharField(_("SKU"), max_length=64, db_index=True)
    name = models.CharField(_("name"), max_length=200)
    name_de = models.CharField(_("German name"), max_length=200, blank=True)
    category = models.CharField(_("category"), max_length=16, choices=Category.choices)
    unit_price_eur = models.DecimalField(
        _("unit price (EUR, net)"), max_digits=12, decimal_places=2
    )
    unit_cost_eur = models.DecimalField(
        _("unit cost (EUR)"),
        max_digits=12,
        decimal_places=2,
        default=Decimal("0.00"),
        help_text=_("Purchase cost; used for margins, visible to staff only."),
    )
    valid_from = models.DateField(_("valid from"))
    is_example = models.BooleanField(
        _("example price"), default=False, help_text=_("Demo data, not a real offer.")
    )

    objects = PriceQuerySet.as_manager()

    class Meta:
        ordering = ["category", "sku", "-valid_from"]
        constraints = [
            models.UniqueConstraint(fields=["sku", "valid_from"], name="price_sku_valid_from"),
            models.CheckConstraint(
                condition=models.Q(unit_price_eur__gte=0), name="price_non_negative"
            ),
        ]
        verbose_name = _("price")
        verbose_name_plural = _("price list")

    def __str__(self) -> str:
        return f"{self.sku} {self.unit_price_eur} EUR from {self.valid_from}"

    def display_name(self, language: str) -> str:
        """The item's name in ``language`` (``de`` or ``en``)."""
        return self.name_de if language == "de" and self.name_de else self.name


class PublicPricing(models.Model):
    """Whether the public page may show prices: one row, edited by presales in the admin.

    Without the row (or with ``show_price_band`` off) the customer page shows each
    recommended configuration's cost relative to the cheapest, never a price.
    """

    show_price_band = models.BooleanField(
        _("show an indicative price band on the public page"), default=False
    )
    band_percent = models.PositiveSmallIntegerField(
        _("band width (± %)"),
        default=10,
        help_text=_("The band shown is the list price minus and plus this share."),
    )

    class Meta:
        verbose_name = _("public pricing")
        verbose_name_plural = _("public pricing")

    def __str__(self) -> str:
        return str(_("public pricing"))

    @classmethod
    def current(cls) -> PublicPricing:
        """The stored policy, or the default (no prices) when none is stored."""
        return cls.objects.filter(pk=1).first() or cls(pk=1)
