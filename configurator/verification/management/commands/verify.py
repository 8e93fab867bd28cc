"""``manage.py verify``: size a workload and check the plan against benchmark data."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser
from django.template.loader import render_to_string
from django.utils import translation

from configurator.dbcheck import require_tables
from configurator.planning.cli import SizingCommand
from configurator.verification.models import BenchmarkRecord
from configurator.verification.outcome import checks_outcome
from configurator.verification.services import benchmarks_load_initial, plan_checks


class Command(SizingCommand):
    help = "Size a workload like `size`, then compare the plan with measured engine starts."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args: Any, **options: Any) -> None:
        require_tables(BenchmarkRecord)
        plan = self.plan_from_options(options)
        if not BenchmarkRecord.objects.filter(kind=BenchmarkRecord.Kind.GROUND_TRUTH).exists():
            benchmarks_load_initial()
        checks = plan_checks(plan)
        outcome = checks_outcome(checks, plan_models=[plan.request.model.repo_id])
        if options["format"] == "json":
            payload = {
                "status": outcome.status,
                "summary": outcome.summary,
                "model": plan.request.model.repo_id,
                "gpu": plan.gpu.slug,
                "counted_checks": len(outcome.counted),
                "informational_checks": len(outcome.informational),
                "checks": [
                    {
                        "name": c.name,
                        "quantity": c.quantity,
                        "unit": c.unit,
                        "predicted": round(c.predicted, 4),
                        "measured": round(c.measured, 4),
                        "deviation": round(c.deviation, 4),
                        "tolerance": c.tolerance,
                        "status": c.status,
                        "counted": c.counted,
                        "note": c.note,
                        "source": c.source,
                        "record": getattr(c.record, "case_id", None)
                        or getattr(c.record, "pk", None),
                    }
                    for c in checks
                ],
            }
            self.stdout.write(json.dumps(payload, indent=2))
        else:
            with translation.override("en"):
                context = {"plan": plan, "outcome": outcome}
                self.stdout.write(render_to_string("verification/report.txt", context))
