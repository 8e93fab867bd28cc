"""``manage.py size``: size a workload and print the plan as text or JSON."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser
from django.template.loader import render_to_string
from django.utils import translation

from configurator.planning.cli import SizingCommand
from sizing.summary import plan_summary


class Command(SizingCommand):
    help = "Size GPUs, the CPU offload tier, DIMMs and NVMe for a model and a workload."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args: Any, **options: Any) -> None:
        plan = self.plan_from_options(options, sold_only=False)  # marked when not sold
        if options["format"] == "json":
            self.stdout.write(json.dumps({"summary": plan_summary(plan)}, indent=2))
        else:
            with translation.override("en"):
                self.stdout.write(
                    render_to_string(
                        "planning/report.txt", {"plan": plan, "summary": plan_summary(plan)}
                    )
                )
