"""Price-list admin with CSV import and export (django-import-export)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from import_export import resources
from import_export.admin import ImportExportModelAdmin

from configurator.catalog.models import Price, PublicPricing


class PriceResource(resources.ModelResource):  # type: ignore[misc]  # untyped library
    """CSV columns of the price list; rows are matched on SKU and valid-from date."""

    class Meta:
        model = Price
        import_id_fields = ("sku", "valid_from")
        fields = (
            "sku",
            "name",
            "name_de",
            "category",
            "unit_price_eur",
            "unit_cost_eur",
            "valid_from",
            "is_example",
        )
        export_order = fields
        skip_unchanged = True
        report_skipped = False
        use_transactions = True


@admin.register(Price)
class PriceAdmin(ImportExportModelAdmin):  # type: ignore[misc]  # untyped library
    resource_classes = [PriceResource]
    list_display = (
        "sku",
        "name",
        "category",
        "unit_price_eur",
        "unit_cost_eur",
        "valid_from",
        "is_example",
    )
    list_filter = ("category", "is_example", "valid_from")
    search_fields = ("sku", "name", "name_de")
    date_hierarchy = "valid_from"


@admin.register(PublicPricing)
class PublicPricingAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """One row: whether the customer page may show an indicative price band."""

    list_display = ("__str__", "show_price_band", "band_percent")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not PublicPricing.objects.exists()
