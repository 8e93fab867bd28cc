"""``manage.py bundle``: size a workload and write its deployment bundle as a ZIP."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from configurator.deployments.services import bundle_build
from configurator.planning.cli import SizingCommand, output_path, positive_int, write_output
from sizing.engines.bundle import ENGINES
from sizing.engines.flags import EngineVersions, versions
from sizing.engines.shared_tier import NFS_MOUNT_KINDS, SHARED_KINDS, TierOptions
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
        parser.add_argument("--engine", choices=(*ENGINES, "all"), default="all")
        parser.add_argument(
            "--out", required=True, help="file to write the ZIP to (any name; kept if it exists)"
        )
        parser.add_argument("--force", action="store_true", help="replace an existing --out file")
        parser.add_argument("--shared", choices=SHARED_KINDS, default="none")
        parser.add_argument("--nvme-mount", default=TierOptions.nvme_mount)
        parser.add_argument("--nfs-server", default=TierOptions.nfs_server)
        parser.add_argument("--nfs-export", default=TierOptions.nfs_export)
        parser.add_argument("--nfs-mount", default=TierOptions.nfs_mount)
        parser.add_argument("--s3-bucket", default=TierOptions.s3_bucket)
        parser.add_argument("--s3-region", default=TierOptions.s3_region)
        parser.add_argument(
            "--s3-endpoint",
            default=TierOptions.s3_endpoint,
            help="host, host:port, or http(s)://host:port (TLS unless http://)",
        )
        parser.add_argument(
            "--nfs-mount-kind", choices=NFS_MOUNT_KINDS, default=TierOptions.nfs_mount_kind
        )
        parser.add_argument(
            "--offload-decode",
            action="store_true",
            help="offload decode blocks too (offload_prompt_only: false)",
        )
        parser.add_argument("--python-hash-seed", type=positive_int, default=0)
        defaults = EngineVersions()
        parser.add_argument("--vllm-version", choices=versions("vllm"), default=defaults.vllm)
        parser.add_argument("--sglang-version", choices=versions("sglang"), default=defaults.sglang)
        parser.add_argument("--dynamo-version", choices=versions("dynamo"), default=defaults.dynamo)

    def handle(self, *args: Any, **options: Any) -> None:
        out = output_path(options["out"], replace=options["force"])
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
        write_output(out, data, replace=options["force"])
        self.stdout.write(f"wrote {out} ({len(data):,} bytes)")
