"""Presales workflows: draft a quote from an inquiry, edit it, issue it, render it."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from configurator.catalog.services import prices_on
from configurator.inquiries import traffic_chart
from configurator.inquiries.models import Inquiry
from configurator.planning.recommend import recommendation_create
from configurator.planning.services import plan_stored
from configurator.quotes.deviations import alternative_deviation_texts
from configurator.quotes.document import document_from_quote
from configurator.quotes.models import (
    Quote,
    QuoteAlternative,
    QuoteLine,
    QuoteNumberCounter,
    QuoteStatus,
)
from configurator.quotes.pricing import alternative_label, price_bom, variant_workloads
from configurator.quotes.tasks import quote_pdf_schedule
from configurator.quotes.terms import VALIDITY_DAYS
from configurator.version import engine_version
from sizing.errors import SizingError
from sizing.search.space import LAYOUT_FIELDS
from sizing.summary import plan_summary


class QuoteFrozenError(Exception):
    """An issued quote cannot be changed."""

    def __init__(self, quote: Quote) -> None:
        super().__init__(
            _("Quote %(number)s is issued and can no longer be changed.") % {"number": quote.number}
        )


class QuoteDeviationError(Exception):
    """The quote's lines fall short of its sizing plan and issuing was not confirmed.

    ``deviations`` maps each alternative's label to its deviation sentences.
    """

    def __init__(self, deviations: dict[str, list[str]]) -> None:
        self.deviations = deviations
        super().__init__(
            _("The quote departs from its sizing plan; confirm to issue it anyway: %(list)s")
            % {"list": "; ".join(f"{k}: {', '.join(v)}" for k, v in deviations.items())}
        )


def quote_deviations(quote: Quote) -> dict[str, list[str]]:
    """Each alternative's deviations from its plan, as sentences in the quote's language
    (alternatives without any are left out)."""
    out: dict[str, list[str]] = {}
    with translation.override(quote.language):
        for alt in quote.alternatives.prefetch_related("lines"):
            texts = alternative_deviation_texts(alt)
            if texts:
                out[alt.label_in(quote.language)] = texts
    return out


def _add_alternative(
    *, quote: Quote, inputs: dict[str, Any], position: int, prices: dict[str, Any]
) -> QuoteAlternative:
    """Plan ``inputs`` and store it as a priced alternative.

    Raises:
        SizingError: the configuration cannot be sized or its parts do not fit a chassis;
            nothing is stored.
    """
    plan = plan_stored(inputs)
    priced = price_bom(plan, prices=prices)
    summary = plan_summary(plan)
    with translation.override(quote.language):
        label = alternative_label(
            plan.request.workload,
            nodes=plan.parallelism.nodes,
            shared_tier_tb=summary["shared_tier_tb"] or 0,
        )
    alt = QuoteAlternative.objects.create(
        quote=quote,
        position=position,
        label=label,
        inputs=inputs,
        plan_summary={**summary, "traffic_curves": traffic_chart.curves(plan)},
    )
    QuoteLine.objects.bulk_create(
        QuoteLine(
            alternative=alt,
            position=n,
            sku=ln.sku,
            description=ln.description_en,
            description_de=ln.description_de,
            category=ln.category,
            quantity=ln.quantity,
            unit_price_eur=ln.unit_price_eur,
            unit_cost_eur=ln.unit_cost_eur,
            why=ln.why_en[:300],
            why_de=ln.why_de[:300],
        )
        for n, ln in enumerate(priced)
    )
    return alt


def quote_create_from_inquiry(
    *, inquiry: Inquiry, user: User | AnonymousUser | None, today: dt.date | None = None
) -> Quote:
    """Draft a quote from ``inquiry``'s plan with its alternatives side by side.

    The requested configuration comes first, then the other GPU of the RTX PRO 6000 SE /
    H200 NVL pair, the other cache precision and, with an NVMe tier, the same without
    it; configurations the engine cannot size are left out. Lines are priced from the
    price list in force on ``today``. A new inquiry moves to "in progress".

    Raises:
        SizingError: the requested configuration itself cannot be sized.
    """
    stored = inquiry.inputs
    variants = [{**stored, **w.to_json()} for w in variant_workloads(inquiry.workload)]
    return _quote_with_alternatives(inquiry=inquiry, user=user, variants=variants, today=today)


def quote_create_from_recommendation(
    *,
    inquiry: Inquiry,
    user: User | AnonymousUser | None,
    choice: dict[str, Any],
    today: dt.date | None = None,
) -> Quote:
    """Draft a quote from one recommended configuration; the other recommended ones
    (:func:`configurator.planning.recommend.recommendation_create`) become its
    alternatives, cheapest first.

    Args:
        inquiry: the customer's workload.
        user: the presales user.
        choice: the chosen configuration's layout
            (:data:`sizing.search.space.LAYOUT_FIELDS`, :class:`~sizing.workload.Workload`
            fields).
        today: the price list's date.

    Raises:
        SizingError: the chosen configuration cannot be sized, or the price list carries
            no GPU; nothing is stored.
    """
    day = today or timezone.localdate()
    chosen = {**inquiry.inputs, **choice}
    result = recommendation_create(
        inquiry.workload,
        private_config=inquiry.private_config,
        private_weights_gib=inquiry.private_weights_gib,
        day=day,
    )
    others = [
        r.inputs
        for r in result.configurations
        if any(r.inputs[k] != chosen[k] for k in LAYOUT_FIELDS)
    ]
    return _quote_with_alternatives(
        inquiry=inquiry, user=user, variants=[chosen, *others], today=day
    )


def _quote_with_alternatives(
    *,
    inquiry: Inquiry,
    user: User | AnonymousUser | None,
    variants: list[dict[str, Any]],
    today: dt.date | None,
) -> Quote:
    """Store a draft for ``inquiry`` with one alternative per entry of ``variants``.

    Variants after the first that the engine cannot size are left out; the first must
    size (else nothing is stored). A new inquiry moves to "in progress".

    Raises:
        SizingError: the first variant cannot be sized.
    """
    prices = prices_on(today or timezone.localdate())
    language = inquiry.language if inquiry.language in ("de", "en") else "de"
    with transaction.atomic():
        quote = Quote.objects.create(
            inquiry=inquiry,
            customer_name=inquiry.name,
            customer_company=inquiry.company,
            customer_email=inquiry.email,
            language=language,
            created_by=user if isinstance(user, User) else None,
        )
        for position, inputs in enumerate(variants):
            try:
                _add_alternative(quote=quote, inputs=inputs, position=position, prices=prices)
            except SizingError:
                if position == 0:
                    raise  # the requested configuration itself: roll back, store nothing
        if inquiry.status == Inquiry.Status.NEW:
            inquiry.status = Inquiry.Status.IN_PROGRESS
            inquiry.save(update_fields=["status"])
        quote_pdf_schedule(quote)
    return quote


def _check_draft(quote: Quote) -> None:
    if quote.is_issued:
        raise QuoteFrozenError(quote)


def quote_update(
    *, quote: Quote, discount_percent: Decimal, language: str, notes: str = ""
) -> Quote:
    """Set a draft's discount (percent of the list total), language and notes.

    Raises:
        QuoteFrozenError: the quote is issued.
    """
    _check_draft(quote)
    quote.discount_percent = discount_percent
    quote.language = language
    quote.notes = notes
    quote.save(update_fields=["discount_percent", "language", "notes", "updated_at"])
    quote_pdf_schedule(quote)
    return quote


def quote_line_set_quantity(*, line: QuoteLine, quantity: int) -> QuoteLine | None:
    """Change a draft line's quantity; 0 removes the line (returns ``None``).

    Raises:
        QuoteFrozenError: the quote is issued.
    """
    quote = line.alternative.quote
    _check_draft(quote)
    quote_pdf_schedule(quote)
    if quantity == 0:
        line.delete()
        return None
    line.quantity = quantity
    if not line.is_manual:
        line.why, line.why_de = _reasons_for_quantity(line)
    line.save(update_fields=["quantity", "why", "why_de"])
    return line


def _reasons_for_quantity(line: QuoteLine) -> tuple[str, str]:
    """A sized line's reason (English, German) for its current quantity.

    At the plan's own quantity the line gets the plan's reason back; at any other it
    says that the quantity was changed on request and what the plan holds, since the
    plan's reason (``537 GB buffer + 384 GB reserve``) describes the planned count only.
    """
    alt = line.alternative
    try:
        planned = price_bom(plan_stored(alt.inputs), prices=prices_on(timezone.localdate()))
    except SizingError:
        planned = []
    match = next((ln for ln in planned if ln.sku == line.sku), None)
    if match is not None and match.quantity == line.quantity:
        return match.why_en[:300], match.why_de[:300]
    texts = []
    for language in ("en", "de"):
        with translation.override(language):
            if match is None:
                text = _("quantity changed on request; the sizing plan has no such line")
            else:
                text = _(
                    "quantity changed on request: %(have)s instead of the %(planned)s "
                    "of the sizing plan"
                ) % {"have": line.quantity, "planned": match.quantity}
        texts.append(text)
    return texts[0], texts[1]


def quote_line_add(
    *, alternative: QuoteAlternative, sku: str, quantity: int, today: dt.date | None = None
) -> QuoteLine:
    """Add ``quantity`` × ``sku`` at today's list price to a draft alternative.

    Raises:
        QuoteFrozenError: the quote is issued.
        KeyError: ``sku`` has no price in force.
    """
    quote = alternative.quote
    _check_draft(quote)
    price = prices_on(today or timezone.localdate())[sku]
    last = alternative.lines.order_by("-position").values_list("position", flat=True).first()
    quote_pdf_schedule(quote)
    return QuoteLine.objects.create(
        alternative=alternative,
        position=(last or 0) + 1,
        sku=price.sku,
        description=price.display_name("en"),
        description_de=price.display_name("de"),
        category=price.category,
        quantity=quantity,
        unit_price_eur=price.unit_price_eur,
        unit_cost_eur=price.unit_cost_eur,
        is_manual=True,
    )


def quote_line_set_provided(
    *, line: QuoteLine, provides: bool, today: dt.date | None = None
) -> QuoteLine:
    """Mark a draft's shared-storage line as brought by the customer (listed at 0.00 EUR)
    or bought (priced again from the price list in force on ``today``; 0.00 EUR and
    flagged unpriced when the list has no price for its SKU).

    Raises:
        QuoteFrozenError: the quote is issued.
        ValueError: the line is not one a customer may bring (``can_be_provided``).
    """
    quote = line.alternative.quote
    _check_draft(quote)
    if not line.can_be_provided:
        raise ValueError(f"{line.sku} is not a line the customer can provide")
    if provides:
        line.unit_price_eur = line.unit_cost_eur = Decimal("0.00")
    else:
        price = prices_on(today or timezone.localdate()).get(line.sku)
        line.unit_price_eur = price.unit_price_eur if price else Decimal("0.00")
        line.unit_cost_eur = price.unit_cost_eur if price else Decimal("0.00")
    line.customer_provides = provides
    line.save(update_fields=["unit_price_eur", "unit_cost_eur", "customer_provides"])
    quote_pdf_schedule(quote)
    return line


def _next_number(year: int) -> str:
    """Take the next number of ``year`` under a row lock (call inside a transaction)."""
    try:
        with transaction.atomic():
            QuoteNumberCounter.objects.get_or_create(year=year)
    except IntegrityError:  # another transaction created the year's row first
        pass
    counter = QuoteNumberCounter.objects.select_for_update().get(year=year)
    counter.last_number += 1
    counter.save(update_fields=["last_number"])
    return f"Q-{year}-{counter.last_number:04d}"


def quote_issue(
    *, quote: Quote, now: dt.datetime | None = None, accept_deviations: bool = False
) -> Quote:
    """Issue a draft: give it the year's next number and freeze it.

    A draft whose lines fall short of its sizing plan (:func:`quote_deviations`) is
    issued only with ``accept_deviations``; the snapshot then records the deviations
    as acknowledged and the PDF states them.

    The number is gapless per year: it is taken from a counter row locked with
    ``SELECT … FOR UPDATE`` in the same transaction that stores the quote, so a
    failure rolls both back. The snapshot holds the plan summaries, the priced lines,
    the totals, the latest verification summary and the engine version; the PDF of an
    issued quote is rendered from it alone. Issuing an issued quote returns it as is.

    Raises:
        QuoteDeviationError: the lines fall short of the plan and ``accept_deviations``
            is false; nothing is changed.
    """
    now = now or timezone.now()
    with transaction.atomic():
        locked = Quote.objects.select_for_update().get(pk=quote.pk)
        if locked.is_issued:
            return locked
        deviations = quote_deviations(locked)
        if deviations and not accept_deviations:
            raise QuoteDeviationError(deviations)
        today = timezone.localdate(now)
        locked.number = _next_number(today.year)
        locked.status = QuoteStatus.ISSUED
        locked.issued_at = now
        locked.valid_until = today + dt.timedelta(days=VALIDITY_DAYS)
        locked.engine_version = engine_version()
        with translation.override(locked.language):
            locked.snapshot = document_from_quote(locked, live=True)
        locked.snapshot["deviations_acknowledged"] = bool(deviations)
        locked.save(
            update_fields=[
                "number",
                "status",
                "issued_at",
                "valid_until",
                "engine_version",
                "snapshot",
                "updated_at",
            ]
        )
        inquiry = locked.inquiry
        if inquiry is not None and inquiry.status in (
            Inquiry.Status.NEW,
            Inquiry.Status.IN_PROGRESS,
        ):
            inquiry.status = Inquiry.Status.QUOTED
            inquiry.save(update_fields=["status"])
        quote_pdf_schedule(locked)
    return locked
