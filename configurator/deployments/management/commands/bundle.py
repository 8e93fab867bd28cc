"""``manage.py bundle``: size a workload and write its deployment bundle as a ZIP."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from django.core.management.base import CommandError, CommandParser

from configurator.deployments.services import bundle_build
from configurator.planning.cli import SizingCommand, output_file, positive_int
from sizing.engines.bundle import ENGINES
from sizing.engines.flags import EngineVersions, versions
from sizing.engines.shared_tier import TierOptions
from sizing.errors import SizingError

OPTION_FOR_FIELD = {
    "shared": "--shared",
    "nvme_mount": "--nvme-mount",
    "nfs_server": "--nfs-server",
    "nfs_export": "--nfs-export",
    "nfs_mount": "--nfs-mount",
    "s3_bucket": "--s3-bucket",
    "s3_region": "--s3-region",
    "s3_endpoint": "--s3-endpoint",
    "python_hash_seed": "--python-hash-seed",
    "nfs_mount_kind": "--nfs-mount-kind",
    "offload_decode": "--offload-decode",
    "engine": "--engine",
}


class Command(SizingCommand):
    help = "Write the engine configuration (commands, JSON, YAML, env, numactl, mounts) as a ZIP."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--engine",
            choices=(*ENGINES, "all"),
            default="all",
            help="engine whose configuration to write (default: all of them)",
        )
        parser.add_argument(
            "--out", required=True, help="file to write the ZIP to (any name; kept if it exists)"
        )
        parser.add_argument("--force", action="store_true", help="replace an existing --out file")
        for tier in fields(TierOptions):
            # Each tier option with TierOptions' own description, default and choices.
            option = OPTION_FOR_FIELD[tier.name]
            helptext = f"{tier.metadata['help']} (default: %(default)s)"
            if tier.default is False:
                parser.add_argument(option, action="store_true", help=tier.metadata["help"])
            elif isinstance(tier.default, int):
                parser.add_argument(option, type=positive_int, default=tier.default, help=helptext)
            else:
                choices = tier.metadata.get("choices")
                parser.add_argument(option, choices=choices, default=tier.default, help=helptext)
        defaults = EngineVersions()
        for engine in ("vllm", "sglang", "dynamo"):
            parser.add_argument(
                f"--{engine}-version",
                choices=versions(engine),
                default=getattr(defaults, engine),
                help=f"{engine} release the flags are written for (default: %(default)s)",
            )

    def handle(self, *args: Any, **options: Any) -> None:
        with output_file(options["out"], replace=options["force"]) as (out, write):
            plan = self.plan_from_options(options)
            try:
                tiers = TierOptions(
                    shared=options["shared"],
                    nvme_mount=options["nvme_mount"],
                    nfs_server=options["nfs_server"],
                    nfs_export=options["nfs_export"],
                    nfs_mount=options["nfs_mount"],
                    s3_bucket=options["s3_bucket"],
                    s3_region=options["s3_region"],
                    s3_endpoint=options["s3_endpoint"],
                    python_hash_seed=options["python_hash_seed"],
                    nfs_mount_kind=options["nfs_mount_kind"],
                    offload_decode=options["offload_decode"],
                )
                data = bundle_build(
                    plan=plan,
                    engine=options["engine"],
                    tiers=tiers,
                    versions=EngineVersions(
                        vllm=options["vllm_version"],
                        sglang=options["sglang_version"],
                        dynamo=options["dynamo_version"],
                    ),
                )
            except SizingError as exc:
                flag = OPTION_FOR_FIELD.get(exc.field, exc.field)
                raise CommandError(f"{flag}: {exc.message}", returncode=2) from exc
            write(data)
            self.stdout.write(f"wrote {out} ({len(data):,} bytes)")
