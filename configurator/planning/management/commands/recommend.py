"""``manage.py recommend``: the cheapest configurations for a workload, as text or JSON."""

from __future__ import annotations

import argparse
import json
from typing import Any

from django.core.management.base import CommandError, CommandParser, no_translations
from django.utils import timezone

from configurator.catalog.services import prices_from_demo_file, prices_on
from configurator.planning.cli import SizingCommand, flag_for
from configurator.planning.recommend import Recommended, recommendation_create
from sizing.errors import SizingError


def gpu_list(text: str) -> list[str]:
    """argparse type: ``all`` (an empty list: every priced GPU) or comma-separated slugs.

    Raises:
        argparse.ArgumentTypeError: no slug in ``text`` (``""``, ``","``): leaving
            ``--gpus`` out, or ``all``, searches every GPU.
    """
    if text.strip().lower() == "all":
        return []
    slugs = [slug.strip() for slug in text.split(",") if slug.strip()]
    if not slugs:
        raise argparse.ArgumentTypeError(
            f"expected GPU slugs, comma-separated, or 'all', got {text!r}"
        )
    return slugs


def _line(rank: str, r: Recommended) -> str:
    s = r.summary()
    nvme = f"{s['nvme_tb']:g} TB NVMe" if s["nvme_tb"] else "no NVMe"
    tb = s["shared_tier_tb"]
    shared = f"{tb:,.1f} TB shared tier" if tb else "no shared tier"
    return (
        f"{rank:>3}  {r.price_net_eur:>12,.2f} EUR  {s['relative_cost']:.2f}×  "
        f"{s['nodes']} × {s['gpus_per_node']} × {s['gpu']} (TP {s['tensor_parallel_size']}), "
        f"{s['kv_dtype']}, {s['dimm_count']} × {s['dimm_gb']} GB = {s['host_memory_gb']:,} GB, "
        f"{nvme}, {shared}\n       {r.why}"
    )


class Command(SizingCommand):
    help = (
        "Recommend the cheapest configurations (GPU type, count, memory, NVMe, shared "
        "tier) for a workload, priced from the price list in force (the bundled example prices "
        "when the price list is empty)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--gpus",
            type=gpu_list,
            default=[],
            help="GPU slugs to search, comma-separated, or 'all' (default: every GPU the "
            "price list carries)",
        )
        parser.add_argument("--format", choices=("text", "json"), default="text")

    @no_translations  # English, as the reasons and errors are
    def handle(self, *args: Any, **options: Any) -> None:
        today = timezone.localdate()
        try:
            model = self._uploaded_model(options)
            result = recommendation_create(
                self.workload_from_options(options),
                revision=options.get("revision"),
                gpus=options["gpus"],
                model=model,
                day=today,
                prices=prices_on(today) or prices_from_demo_file(today),
            )
        except SizingError as exc:
            flag = "--gpus" if exc.field == "gpus" else flag_for(exc.field)
            raise CommandError(f"{flag}: {exc.message}", returncode=2) from exc
        if options["format"] == "json":
            self.stdout.write(json.dumps(result.to_json(), indent=2))
            return
        out = [
            f"Price list of {result.priced_on.isoformat()}, "
            f"{result.evaluated} configurations sized."
        ]
        if result.relaxed_text is not None:
            out.append(result.relaxed_text)
        if not result.configurations:
            out.append(f"No configuration meets the workload: {result.binding_text} binds.")
            if result.nearest is not None:
                out.append("Nearest:")
                out.append(_line("~", result.nearest))
        for n, r in enumerate(result.configurations, start=1):
            out.append(_line(f"{n}.", r))
        if result.reference is not None:
            out.append("Requested layout:")
            out.append(_line("=", result.reference))
        with_tier, without = result.dram_with_tier, result.dram_without_tier
        if with_tier is not None and without is not None and result.dram_saving_eur:
            out.append(
                f"DRAM instead of GPUs: the cheapest with a CPU tier costs "
                f"{result.dram_saving_eur:,.2f} EUR less than the cheapest without one that "
                f"meets the TTFT p95 target of {result.dram_target_ms:,} ms "
                f"({without.config.gpus} × {without.config.plan.gpu.slug}); it only has to "
                "reach the target, so it can take fewer GPUs than keeping a tiered "
                "configuration's own TTFT p95 without its tier."
            )
        self.stdout.write("\n".join(out))
