"""The price list's CSV export and import through the admin pages, in either language."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from configurator.catalog.admin import PriceResource
from configurator.catalog.models import Price

pytestmark = pytest.mark.django_db

# The columns of PriceResource.Meta.fields, in its export order.
HEADER = "sku,name,name_de,category,unit_price_eur,unit_cost_eur,valid_from,is_example"


@pytest.fixture
def staff(client: Client) -> Client:
    user = get_user_model().objects.create_superuser("boss", "boss@example.com", "pw")
    client.force_login(user)
    return client


@pytest.fixture
def bridge() -> Price:
    # A price with a non-ASCII name and a value above a thousand, so a German export
    # with locale formatting would write "1.450,00" or "1450,00".
    return Price.objects.create(
        sku="NVLINK-BRIDGE-4WAY",
        name="NVIDIA NVLink bridge, 4-way",
        name_de="NVIDIA-NVLink-Brücke, 4-fach",
        category="bridge",
        unit_price_eur=Decimal("1450.00"),
        unit_cost_eur=Decimal("1100.00"),
        valid_from=dt.date(2026, 1, 1),
    )


def _export_csv(client: Client, language: str) -> tuple[str, bytes]:
    """The admin's CSV export of every column: (Content-Type, body bytes)."""
    data = {"format": "0", "resource": "0"}  # CSV is the admin's first format
    for field in PriceResource.Meta.fields:
        data[f"priceresource_{field}"] = "on"
    response = client.post(
        reverse("admin:catalog_price_export"), data, HTTP_ACCEPT_LANGUAGE=language
    )
    assert response.status_code == 200
    return response["Content-Type"], response.content


def _import_csv(client: Client, body: bytes, language: str) -> str:
    """The page the admin answers an uploaded CSV file with (the dry run)."""
    upload = SimpleUploadedFile("prices.csv", body, content_type="text/csv")
    response = client.post(
        reverse("admin:catalog_price_import"),
        {"format": "0", "resource": "0", "import_file": upload},
        HTTP_ACCEPT_LANGUAGE=language,
    )
    assert response.status_code == 200
    return response.content.decode()


def test_german_export_writes_prices_with_a_dot(staff: Client, bridge: Price) -> None:
    _, body = _export_csv(staff, "de")
    lines = body.decode("utf-8").splitlines()
    assert lines[0] == HEADER
    # The bridge fixture's values, in the order of HEADER.
    assert lines[1] == (
        'NVLINK-BRIDGE-4WAY,"NVIDIA NVLink bridge, 4-way","NVIDIA-NVLink-Brücke, 4-fach",'
        "bridge,1450.00,1100.00,2026-01-01,0"
    )


@pytest.mark.parametrize("language", ["en", "de"])
def test_export_made_in_german_imports(staff: Client, bridge: Price, language: str) -> None:
    _, body = _export_csv(staff, "de")
    changed = body.replace(b"1450.00", b"1499.50")
    page = _import_csv(staff, changed, language)
    assert "Line number" not in page and "Zeilennummer" not in page
    assert "validation-error" not in page
    assert 'name="import_file_name"' in page  # the confirm form of a clean dry run
    confirm = {
        "import_file_name": _hidden(page, "import_file_name"),
        "original_file_name": "prices.csv",
        "format": "0",
        "resource": "0",
    }
    done = staff.post(reverse("admin:catalog_price_process_import"), confirm)
    assert done.status_code == 302
    assert Price.objects.get(sku="NVLINK-BRIDGE-4WAY").unit_price_eur == Decimal("1499.50")


def test_unreadable_price_names_column_and_value(staff: Client, bridge: Price) -> None:
    body = f"{HEADER}\nNVLINK-BRIDGE-4WAY,a,b,bridge,1450;00,1100.00,2026-01-01,0\n"
    page = _import_csv(staff, body.encode(), "en")
    assert "ConversionSyntax" not in page
    # The row's error, under the column's name (the admin's validation-error list).
    assert (
        '<span class="validation-error-field-label">unit_price_eur</span>' in page
        and "“1450;00” is no price" in page
    )
    assert Price.objects.get(sku="NVLINK-BRIDGE-4WAY").unit_price_eur == Decimal("1450.00")


def test_file_without_the_key_columns_gets_a_form_error(staff: Client) -> None:
    body = b"code,name,price\nX,x,1.00\n"
    page = _import_csv(staff, body, "en")
    assert "Traceback" not in page and "FieldError" not in page
    # An error of the upload form's file field, naming PriceResource's import_id_fields.
    assert (
        '<ul class="errorlist" id="id_import_file_error"><li>'
        "The file lacks the columns rows are matched on: sku, valid_from.</li>"
    ) in page
    assert not Price.objects.exists()


def test_export_names_its_charset_and_is_utf8(staff: Client, bridge: Price) -> None:
    content_type, body = _export_csv(staff, "en")
    assert content_type == "text/csv; charset=utf-8"
    assert "NVIDIA-NVLink-Brücke".encode() in body  # ü as UTF-8: b"\xc3\xbc"
    body.decode("utf-8")  # the whole file is valid UTF-8


def _hidden(page: str, name: str) -> str:
    """The value of the hidden input ``name`` on ``page``."""
    start = page.index(f'name="{name}"')
    tag_start = page.rindex("<input", 0, start)
    tag = page[tag_start : page.index(">", start)]
    return tag.split('value="', 1)[1].split('"', 1)[0]


def test_missing_columns_error_is_in_the_admin_language(staff: Client) -> None:
    page = _import_csv(staff, b"code,name,price\nX,x,1.00\n", "de")
    # The German text of the message, from configurator/locale/de/LC_MESSAGES/django.po.
    assert (
        "Der Datei fehlen die Spalten, über die Zeilen zugeordnet werden: sku, valid_from." in page
    )


@pytest.mark.parametrize("price", ["NaN", "inf", "-Infinity", "1e3", "1.45E+3"])
def test_non_finite_and_exponent_prices_are_row_errors(
    staff: Client, bridge: Price, price: str
) -> None:
    # Python's Decimal reads these as numbers (NaN, infinity, 1000, 1450); a price list
    # writes prices like 1450.00, so each is refused as unreadable prices are
    # (test_unreadable_price_names_column_and_value: the column and the value named).
    body = f"{HEADER}\nNVLINK-BRIDGE-4WAY,a,b,bridge,{price},1100.00,2026-01-01,0\n"
    page = _import_csv(staff, body.encode(), "en")
    assert "Traceback" not in page
    assert (
        '<span class="validation-error-field-label">unit_price_eur</span>' in page
        and f"“{price}” is no price" in page
    )
    assert 'name="import_file_name"' not in page  # no confirm form: nothing can be imported
    assert Price.objects.get(sku="NVLINK-BRIDGE-4WAY").unit_price_eur == Decimal("1450.00")


@pytest.mark.parametrize("flag", ["yes", "ja", "maybe"])
def test_an_unknown_example_flag_is_a_row_error_not_false(
    staff: Client, bridge: Price, flag: str
) -> None:
    # import_export's BooleanWidget reads any text but 1/true and 0/false as False.
    body = f"{HEADER}\nNVLINK-BRIDGE-4WAY,a,b,bridge,1450.00,1100.00,2026-01-01,{flag}\n"
    page = _import_csv(staff, body.encode(), "en")
    assert '<span class="validation-error-field-label">is_example</span>' in page
    assert f"“{flag}” is neither 1 nor 0" in page
    assert 'name="import_file_name"' not in page  # no confirm form: nothing can be imported


@pytest.mark.parametrize(
    ("column", "row"),
    [
        # Price.unit_price_eur: max_digits 12, decimal_places 2 (catalog/models.py).
        ("unit_price_eur", "bridge,9999999999999999999999,1100.00"),
        ("unit_price_eur", "bridge,1450.001,1100.00"),
        # Price.category: one of Category.choices.
        ("category", "no-such-category,1450.00,1100.00"),
    ],
)
def test_a_row_the_model_refuses_is_a_row_error_and_the_list_still_reads(
    staff: Client, bridge: Price, column: str, row: str
) -> None:
    body = f"{HEADER}\nNVLINK-BRIDGE-4WAY,a,b,{row},2026-01-01,0\n"
    page = _import_csv(staff, body.encode(), "en")
    assert "Traceback" not in page
    assert f'<span class="validation-error-field-label">{column}</span>' in page
    assert 'name="import_file_name"' not in page  # no confirm form: nothing can be imported
    assert [p.unit_price_eur for p in Price.objects.all()] == [Decimal("1450.00")]


def test_a_negative_price_names_its_column_and_value(staff: Client, bridge: Price) -> None:
    # The table's check constraint (price_non_negative) would report only its own name.
    body = f"{HEADER}\nNVLINK-BRIDGE-4WAY,a,b,bridge,-5.00,1100.00,2026-01-01,0\n"
    page = _import_csv(staff, body.encode(), "en")
    assert "price_non_negative" not in page
    assert (
        '<span class="validation-error-field-label">unit_price_eur</span>' in page
        and "“-5.00” is below zero; a price or cost is 0 or more" in page
    )
    assert Price.objects.get(sku="NVLINK-BRIDGE-4WAY").unit_price_eur == Decimal("1450.00")


@pytest.mark.parametrize(("language", "expected"), [
    ("en", "valid_from: “2026-02-31” is no date; write it like 2026-01-01"),
    ("de", "valid_from: „2026-02-31“ ist kein Datum; bitte wie 2026-01-01 schreiben"),
])  # fmt: skip
def test_an_unreadable_date_names_the_column_and_value(
    staff: Client, bridge: Price, language: str, expected: str
) -> None:
    # February has no 31st; the library's own message says only "Value could not be
    # parsed", and the date is read before the row's columns (it matches the rows).
    body = f"{HEADER}\nNVLINK-BRIDGE-4WAY,a,b,bridge,1450.00,1100.00,2026-02-31,0\n"
    page = _import_csv(staff, body.encode(), language)
    assert expected in page
    assert "could not be parsed" not in page
