"""Price-list admin with CSV import and export (django-import-export).

Files are machine-readable in any admin language: prices are written with a dot
(``1450.00``), text is UTF-8 and the download says so in its ``Content-Type``.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.translation import gettext as _
from import_export import resources, widgets
from import_export.admin import ImportExportModelAdmin
from import_export.formats import base_formats
from import_export.forms import ImportForm

from configurator.catalog.models import Price, PublicPricing

# The encoding of uploaded text files: the admin's default, which also drops a BOM.
UPLOAD_ENCODING = "utf-8-sig"


class PriceWidget(widgets.DecimalWidget):  # type: ignore[misc]  # untyped library
    """A price column: a value the library cannot read is a row error naming it."""

    def clean(self, value: Any, row: Any = None, **kwargs: Any) -> Decimal | None:
        """``value`` as ``Decimal`` (dot or the admin language's separator), or None.

        Raises ``ValueError`` (which the resource reports as the column's error on
        the row) for text that is no number, and for what ``Decimal`` reads but a
        price list does not write: ``NaN``, infinities and exponents (``1e3``).
        """
        unreadable = ValueError(
            _("“%(value)s” is no price; write it like 1450.00") % {"value": value}
        )
        try:
            cleaned: Decimal | None = super().clean(value, row=row, **kwargs)
        except InvalidOperation:
            raise unreadable from None
        if cleaned is not None and (not cleaned.is_finite() or "e" in str(value).lower()):
            raise unreadable
        if cleaned is not None and cleaned < 0:
            # named here: the table's check constraint would report only its own name
            raise ValueError(
                _("“%(value)s” is below zero; a price or cost is 0 or more") % {"value": value}
            )
        return cleaned


class DayWidget(widgets.DateWidget):  # type: ignore[misc]  # untyped library
    """The valid-from column: a value the library cannot read as a date is an error
    naming the column and the value (the library's own says only that a value "could not
    be parsed", and before the column is known, since the date matches rows)."""

    def clean(self, value: Any, row: Any = None, **kwargs: Any) -> Any:
        """``value`` as ``datetime.date`` (ISO 8601, ``2026-01-01``), or None.

        Raises ``ValueError`` naming the column for text that is no date.
        """
        try:
            return super().clean(value, row=row, **kwargs)
        except ValueError:
            raise ValueError(
                _("valid_from: “%(value)s” is no date; write it like 2026-01-01") % {"value": value}
            ) from None


class FlagWidget(widgets.BooleanWidget):  # type: ignore[misc]  # untyped library
    """A yes/no column: a value the library does not know is a row error naming it."""

    def clean(self, value: Any, row: Any = None, **kwargs: Any) -> bool | None:
        """``value`` as ``True`` (1, true), ``False`` (0, false) or None (empty, null).

        Raises ``ValueError`` for any other text (the library reads it as ``False``,
        so that "yes" or "ja" would silently clear the flag).
        """
        known = (*self.TRUE_VALUES, *self.FALSE_VALUES, *self.NULL_VALUES)
        if value not in known:
            raise ValueError(_("“%(value)s” is neither 1 nor 0") % {"value": value})
        cleaned: bool | None = super().clean(value, row=row, **kwargs)
        return cleaned


class PriceResource(resources.ModelResource):  # type: ignore[misc]  # untyped library
    """CSV columns of the price list; rows are matched on SKU and valid-from date."""

    WIDGETS_MAP = {
        **resources.ModelResource.WIDGETS_MAP,
        "DecimalField": PriceWidget,
        "BooleanField": FlagWidget,
        "DateField": DayWidget,
    }

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
        # Prices leave as Decimal, which text formats write as "1450.00" whatever
        # the admin's language (a string would be localised: "1450,00").
        widgets = {
            "unit_price_eur": {"coerce_to_string": False},
            "unit_cost_eur": {"coerce_to_string": False},
        }
        skip_unchanged = True
        report_skipped = False
        use_transactions = True
        # Each row is validated as the model's form would (digits, category, lengths):
        # a 22-digit price that SQLite stored would make every read of the list fail.
        clean_model_instances = True


class PriceImportForm(ImportForm):  # type: ignore[misc]  # untyped library
    """The upload form; a file without the columns rows are matched on is refused."""

    def __init__(self, formats: list[Any], resources: list[Any], **kwargs: Any) -> None:
        super().__init__(formats, resources, **kwargs)
        self._formats = formats
        self._resources = resources

    def clean(self) -> dict[str, Any]:
        """The cleaned data; an error on the file that lists its missing key columns."""
        data: dict[str, Any] = super().clean()
        upload, chosen = data.get("import_file"), data.get("format")
        if upload is None or chosen in (None, ""):
            return data
        file_format = self._formats[int(chosen)]()
        if not file_format.is_binary():
            file_format.encoding = UPLOAD_ENCODING
        try:
            headers = file_format.create_dataset(upload.read()).headers or []
        except Exception:  # the admin reports unreadable files itself
            return data
        finally:
            upload.seek(0)
        resource = self._resources[int(data.get("resource") or 0)]()
        missing = [
            resource.fields[name].column_name
            for name in resource.get_import_id_fields()
            if resource.fields[name].column_name not in headers
        ]
        if missing:
            self.add_error(
                "import_file",
                _("The file lacks the columns rows are matched on: %(columns)s.")
                % {"columns": ", ".join(missing)},
            )
        return data


class _NamedCharset:
    """A text format whose download names its encoding (UTF-8)."""

    def get_content_type(self) -> str:
        return f"{super().get_content_type()}; charset=utf-8"  # type: ignore[misc]


class CSV(_NamedCharset, base_formats.CSV):  # type: ignore[misc]  # untyped library
    pass


class TSV(_NamedCharset, base_formats.TSV):  # type: ignore[misc]  # untyped library
    pass


class JSON(_NamedCharset, base_formats.JSON):  # type: ignore[misc]  # untyped library
    pass


class YAML(_NamedCharset, base_formats.YAML):  # type: ignore[misc]  # untyped library
    pass


class HTML(_NamedCharset, base_formats.HTML):  # type: ignore[misc]  # untyped library
    pass


@admin.register(Price)
class PriceAdmin(ImportExportModelAdmin):  # type: ignore[misc]  # untyped library
    resource_classes = [PriceResource]
    formats = [CSV, TSV, JSON, YAML, HTML]
    import_form_class = PriceImportForm
    from_encoding = UPLOAD_ENCODING
    to_encoding = "utf-8"
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
