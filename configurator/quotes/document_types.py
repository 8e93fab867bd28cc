"""The quote document's shape: what an issued quote stores as its snapshot and what the
PDF and the quote page are drawn from (:mod:`configurator.quotes.document`).

JSON-safe throughout: money as decimal strings (``"1234.50"``, EUR), dates as ISO
strings. Snapshots stored before a key existed lack it; such keys are ``NotRequired``
and read with a default (:func:`configurator.quotes.document.as_decimal_document`).
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from configurator.quotes.verification_reader import VerificationSummary


class Customer(TypedDict):
    """Who the quote is for, as the inquiry gave it (``company``/``email`` may be ``""``)."""

    name: str
    company: str
    email: str


class DocumentLine(TypedDict):
    """One priced line of an alternative.

    Attributes:
        position: 1-based, in the alternative's order.
        unit_price_eur, unit_cost_eur, total_eur: decimal strings, EUR; the total is
            quantity × unit price, to the cent.
        why: the reason for the line in the quote's language.
        is_example: the price-list entry is marked as an example price (absent in
            snapshots stored before example prices were marked).
        customer_provides: the customer brings the item (the shared tier's storage),
            listed at 0.00 EUR (absent in snapshots stored before lines could be).
    """

    position: int
    sku: str
    description: str
    category: str
    quantity: int
    unit_price_eur: str
    unit_cost_eur: str
    total_eur: str
    why: str
    is_example: NotRequired[bool]
    customer_provides: NotRequired[bool]


class Totals(TypedDict):
    """An alternative's totals (:func:`configurator.quotes.models.compute_totals`) as
    decimal strings, EUR; ``margin_percent`` in percent of the net."""

    subtotal: str
    discount: str
    net: str
    vat: str
    gross: str
    cost: str
    margin: str
    margin_percent: str


class DocumentAlternative(TypedDict):
    """One configuration of the quote.

    Attributes:
        label: its title in the quote's language.
        inputs: the stored workload (:meth:`sizing.workload.Workload.to_json` of any
            stored schema).
        summary: the plan summary stored with the alternative (``docs/cli.md`` keys,
            with the traffic charts' points where the quote was made after they were).
        nvme_capacity_tb: the NVMe tier's raw capacity, TB (10^12 bytes); 0.0 without one.
        deviations: where the lines fall short of the plan, in the quote's language.
        engine: the vLLM launch (:func:`configurator.quotes.engine_appendix.engine_appendix`)
            or ``None``.
    """

    label: str
    inputs: dict[str, Any]
    summary: dict[str, Any]
    nvme_capacity_tb: float
    lines: list[DocumentLine]
    totals: Totals
    deviations: NotRequired[list[str]]
    engine: NotRequired[dict[str, Any] | None]


class QuoteDocument(TypedDict):
    """Everything a quote shows.

    Attributes:
        status: ``draft`` or ``issued``.
        number: ``Q-<year>-<nnnn>`` once issued, else ``None``.
        language: ``de`` or ``en``.
        date, valid_until: ISO dates; ``valid_until`` is ``None`` for every draft (a stored
            quote's or one rendered from plans): validity starts when issued.
        discount_percent, vat_rate: decimal strings (``"5.00"``, ``"0.19"``).
        engine_version: ``sizing <version>``.
        example_prices: some line carries an example price.
        verification: the latest verification, or ``None``.
        deviations_acknowledged: issued although lines fall short of the plan (set when
            issued).
    """

    status: str
    number: str | None
    language: str
    customer: Customer
    inquiry_reference: str | None
    date: str
    valid_until: str | None
    discount_percent: str
    vat_rate: str
    engine_version: str
    notes: str
    example_prices: bool
    alternatives: list[DocumentAlternative]
    verification: VerificationSummary | None
    deviations_acknowledged: NotRequired[bool]
