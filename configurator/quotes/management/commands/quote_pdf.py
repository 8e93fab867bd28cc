"""``manage.py quote_pdf``: render a DRAFT quote PDF for a workload from a terminal.

Takes the sizing arguments of ``size`` plus ``--customer``, ``--language`` and
``--out``; prices come from the current price list (the bundled example prices when
the list is empty). Nothing is stored.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils import timezone, translation

from configurator.catalog.services import prices_from_demo_file, prices_on
from configurator.inquiries.contact import HIDDEN_CHARACTERS, MAX_NAME_CHARS, one_line, visible
from configurator.planning.cli import SizingCommand, flag_for, output_file
from configurator.quotes.document import document_from_plans
from configurator.quotes.pdf import quote_pdf_render
from configurator.quotes.pricing import alternative_label, price_bom
from sizing.errors import SizingError
from sizing.summary import plan_summary
from sizing.workload import stored_inputs


class Command(SizingCommand):
    help = "Render a draft quote PDF (marked DRAFT) from the sizing arguments."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--customer", required=True, help="customer name on the quote")
        parser.add_argument("--language", choices=("de", "en"), default="de")
        parser.add_argument("--out", required=True, help="PDF file to write (kept if it exists)")
        parser.add_argument("--force", action="store_true", help="replace an existing --out file")

    def handle(self, *args: Any, **options: Any) -> None:
        # as the quote request takes a company name: line breaks become spaces
        customer = one_line(options["customer"])
        if not visible(customer):
            raise CommandError("--customer: must not be empty", returncode=2)
        if len(customer) > MAX_NAME_CHARS:
            raise CommandError(
                f"--customer: at most {MAX_NAME_CHARS} characters, got {len(customer):,}",
                returncode=2,
            )
        hidden = HIDDEN_CHARACTERS.search(customer)
        if hidden:
            raise CommandError(
                f"--customer: remove the invisible control character U+{ord(hidden.group()):04X}",
                returncode=2,
            )
        with output_file(options["out"], replace=options["force"]) as (out, write):
            plan = self.plan_from_options(options)
            today = timezone.localdate()
            prices = prices_on(today) or prices_from_demo_file()
            language = options["language"]
            summary = plan_summary(plan)
            with translation.override(language):
                inputs = stored_inputs(plan.request.workload)
                label = alternative_label(
                    plan.request.workload,
                    nodes=plan.parallelism.nodes,
                    shared_tier_tb=summary["shared_tier_tb"] or 0,
                )
            try:
                lines = price_bom(plan, prices=prices, language=language)
            except SizingError as exc:  # the parts do not fit a chassis
                raise CommandError(f"{flag_for(exc.field)}: {exc.message}", returncode=2) from exc
            doc = document_from_plans(
                customer=customer,
                language=language,
                alternatives=[(label, inputs, dict(summary), lines)],
                today=today,
            )
            write(quote_pdf_render(doc))
            self.stdout.write(f"DRAFT quote for {customer} written to {out}")
