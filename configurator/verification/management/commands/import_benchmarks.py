"""``manage.py import_benchmarks``: import engine logs and benchmark results.

All files or none: a malformed or partial file, or one over the admin upload's 20 MiB,
ends the command with status 2 and one line naming the file and what is missing, and
nothing is stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from configurator.dbcheck import require_tables
from configurator.uploads import read_at_most
from configurator.verification.forms import MAX_UPLOAD_BYTES
from configurator.verification.models import BenchmarkRecord
from configurator.verification.parsers import FORMATS, ParseError
from configurator.verification.services import benchmarks_load_initial, record_import_file


class Command(BaseCommand):
    help = "Import vLLM/SGLang startup logs and `vllm bench serve` JSON as benchmark records."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", type=Path, help="files to import")
        parser.add_argument("--format", dest="fmt", choices=FORMATS, default=None)
        parser.add_argument("--gpu", default=None, help="the GPU, when the file does not name it")
        parser.add_argument("--engine-version", default=None)
        parser.add_argument("--source", default="", help="where the files come from")
        parser.add_argument(
            "--initial", action="store_true", help="load the bundled ground-truth cases"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["paths"] and not options["initial"]:
            raise CommandError("give files to import or --initial", returncode=2)
        require_tables(BenchmarkRecord)
        new = old = 0
        try:
            with transaction.atomic():
                for path in options["paths"]:
                    try:
                        content = read_at_most(path, MAX_UPLOAD_BYTES)  # the admin's limit
                    except OSError as exc:
                        raise CommandError(f"{path}: {exc.strerror}", returncode=2) from None
                    if content is None:
                        raise CommandError(
                            f"{path}: the file is larger than {MAX_UPLOAD_BYTES:,} bytes",
                            returncode=2,
                        )
                    _record, created = record_import_file(
                        content=content,
                        filename=str(path),
                        fmt=options["fmt"],
                        gpu_type=options["gpu"],
                        engine_version=options["engine_version"],
                        source=options["source"] or path.name,
                    )
                    new, old = new + created, old + (not created)
        except ParseError as exc:
            raise CommandError(exc.message, returncode=2) from None
        if options["initial"]:
            self.stdout.write(f"bundled cases: {benchmarks_load_initial()} records")
        if options["paths"]:
            self.stdout.write(f"imported {new} new record(s), {old} already present")
