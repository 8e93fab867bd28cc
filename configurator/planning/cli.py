"""Shared pieces of the sizing commands (``size``, ``quote_pdf``, ``bundle``, ``verify``).

Bad input ends the command with exit status 2 and one line naming the input.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import re
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser

from configurator.modelhub.services import model_lookup
from configurator.modelhub.upload import model_from_config_upload
from configurator.planning.services import plan_create
from configurator.uploads import MAX_CONFIG_BYTES, read_at_most
from configurator.version import engine_version
from sizing.bom.lines import check_node, check_node_fits
from sizing.errors import SizingError
from sizing.hardware import catalog
from sizing.inputs import Input
from sizing.model.spec import ModelSpec
from sizing.plan.orchestrator import Plan
from sizing.workload import FIELDS, FLAG_NAMES, INPUTS, SHORT_NAMES, Workload

FLAG_SPELLING = {name: "--" + short for name, short in {**SHORT_NAMES, **FLAG_NAMES}.items()}
"""Workload fields whose flag is not ``--`` + the field name with dashes (the seed
example's ``--context``, ``--time-between-turns``); the field's own flag
(``--context-tokens``) works as well."""

MODEL_FLAGS = {
    "config": "--config",
    "model_name": "--model-name",
    "weights_gib": "--weights-gib",
    "revision": "--revision",
}
"""The flags of error fields that are model inputs rather than :class:`Workload` fields."""


def flag_for(field_name: str) -> str:
    """The command-line flag of an error's field (``context_tokens`` → ``--context``)."""
    name = field_name.split(".")[0]
    if name in MODEL_FLAGS:
        return MODEL_FLAGS[name]
    if name in FIELDS:
        return FLAG_SPELLING.get(name, "--" + name.replace("_", "-"))
    return field_name


ARGUMENT_NAMED = re.compile(r"^argument (--[\w-]+)(?:/--[\w-]+)*: ")
"""How argparse names the flag of a refused value (``argument --context/--context-tokens:``)."""


def _one_line_error(parser: CommandParser, message: str) -> NoReturn:
    """Report a usage error in one line (no usage block) and exit with status 2 (from
    ``call_command``: raise :class:`CommandError` with status 2); a refused value is
    named by its flag as the sizing errors name it (``--users: …``)."""
    message = ARGUMENT_NAMED.sub(r"\1: ", message)
    if not parser.called_from_command_line:
        raise CommandError(message, returncode=2)  # call_command: as Django's parser does
    parser.exit(2, f"{parser.prog}: error: {message}\n")


def positive_int(text: str) -> int:
    """argparse type of an option that is no :class:`Workload` input: a whole number
    (its range is checked where the option is used)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def declared_type(declared: Input) -> Callable[[str], object]:
    """argparse type of a :class:`Workload` input's flag: the text read as the input's
    type and checked against its declaration (:meth:`sizing.inputs.Input.parse` and
    :meth:`~sizing.inputs.Input.check`, the check the form and the JSON API make), so
    ``--users 0`` is refused with the sentence they give."""

    def parse(text: str) -> object:
        try:
            value = declared.parse(text)
            declared.check(value)
        except SizingError as exc:
            raise argparse.ArgumentTypeError(exc.message) from None
        return value

    parse.__name__ = declared.name  # argparse names the type in its own messages
    return parse


def add_workload_arguments(parser: CommandParser) -> None:
    """One flag per :class:`Workload` field, with its default and English help.

    ``--model`` is optional here (``--config`` names a private model instead); a boolean
    field is a switch; every other flag is read and checked by :func:`declared_type`.
    An empty choice (``serving_engine`` not decided) is the flag left out, not a choice
    to list.
    """
    for name, f in FIELDS.items():
        flags = [flag_for(name)]
        if name in FLAG_SPELLING:
            flags.append("--" + name.replace("_", "-"))
        help_text = f.metadata["help"]
        if INPUTS[name].kind is bool:
            parser.add_argument(*flags, dest=name, action="store_true", help=help_text)
            continue
        if name == "model":  # or --config
            extra: dict[str, Any] = {"default": None}
        elif f.default is dataclasses.MISSING:
            extra = {"required": True}
        else:
            extra = {"default": f.default}
        if "choices" in f.metadata:
            # "" (not decided) is what leaving the flag out means; the help says so in words
            extra["choices"] = [choice for choice in f.metadata["choices"] if choice != ""]
        if f.default not in (None, "", dataclasses.MISSING):
            help_text += " (default: %(default)s)"
        if name == "gpu":
            help_text += f", one of: {', '.join(sorted(catalog.gpus()))}"
        parser.add_argument(
            *flags, dest=name, type=declared_type(INPUTS[name]), help=help_text, **extra
        )


def positive_gib(text: str) -> float:
    """argparse type: a positive size in GiB."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive size in GiB, got {text!r}")
    return value


def _exists(path: Path, flag: str) -> CommandError:
    return CommandError(f"{flag}: {path} exists; give --force to replace it", returncode=2)


def output_path(text: str, *, flag: str = "--out", replace: bool = True) -> Path:
    """The file a command will write, checked by its name before any work is done.

    ``replace=False`` refuses a file that exists already (``bundle`` without
    ``--force``).

    Raises:
        CommandError: exit status 2, naming ``flag``, for a directory, a missing folder,
            or an existing file not to be replaced.
    """
    path = Path(text)
    if path.is_dir():
        raise CommandError(f"{flag}: {path} is a directory; give a file name", returncode=2)
    if not path.parent.is_dir():
        raise CommandError(f"{flag}: directory {path.parent} does not exist", returncode=2)
    if not replace and path.exists():
        raise _exists(path, flag)
    return path


def _cannot_write(path: Path, flag: str, exc: OSError) -> CommandError:
    return CommandError(f"{flag}: cannot write {path}: {exc.strerror}", returncode=2)


@contextlib.contextmanager
def output_file(
    text: str, *, flag: str = "--out", replace: bool = True
) -> Iterator[tuple[Path, Callable[[bytes], None]]]:
    """The file a command will write, opened before any work is done, and the function
    that writes its whole content: a path the system refuses (``/proc/q.pdf``, a
    read-only file) fails at once, before a PDF is rendered or a bundle built.

    A new file is created empty (``replace=False`` only if it does not exist, also when
    it appeared after the check) and removed again when the work fails before writing;
    an existing file being replaced keeps its content until the write.

    Raises:
        CommandError: exit status 2, naming ``flag``: :func:`output_path`'s refusals,
            and the system's reason for a file it will not open or write.
    """
    path = output_path(text, flag=flag, replace=replace)
    try:
        existing = replace and path.exists()
        handle = path.open("r+b" if existing else "xb")
    except FileExistsError as exc:
        raise _exists(path, flag) from exc
    except OSError as exc:
        raise _cannot_write(path, flag, exc) from exc
    written = False

    def write(data: bytes) -> None:
        nonlocal written
        try:
            handle.write(data)
            handle.truncate()
            handle.flush()
        except OSError as exc:
            raise _cannot_write(path, flag, exc) from exc
        written = True

    try:
        yield path, write
    finally:
        handle.close()
        if not existing and not written:
            path.unlink(missing_ok=True)


class SizingCommand(BaseCommand):
    """Base class of commands that take the sizing arguments of ``size``.

    They read no URLconf and change no schema, so Django's system checks (which import
    every view module) are skipped: a sizing answer starts in a fraction of the time.
    """

    requires_system_checks: list[str] = []

    def get_version(self) -> str:
        """What ``--version`` prints: the sizing engine's version (as a quote states it),
        not Django's."""
        return engine_version()

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        # argparse prints a multi-line usage block before the error; one line names the input.
        parser.error = types.MethodType(_one_line_error, parser)  # type: ignore[method-assign]
        self._prog = parser.prog
        return parser

    def execute(self, *args: Any, **options: Any) -> str | None:
        """Run the command; on the command line a :class:`CommandError` is reported in the
        same one-line form as a usage error (``manage.py size: error: --users: …``)."""
        try:
            return super().execute(*args, **options)
        except CommandError as exc:
            if not getattr(self, "_called_from_command_line", False) or options.get("traceback"):
                raise
            self.stderr.write(f"{self._prog}: error: {exc}")
            sys.exit(exc.returncode)

    def add_arguments(self, parser: CommandParser) -> None:
        add_workload_arguments(parser)
        parser.add_argument(
            "--config", default=None, help="config.json of a private model (instead of --model)"
        )
        parser.add_argument("--model-name", default=None, help="name of the --config model")
        parser.add_argument(
            "--weights-gib", type=positive_gib, default=None, help="weights of the --config model"
        )
        parser.add_argument("--revision", default=None, help="Hub revision (branch, tag, commit)")

    def workload_from_options(self, options: dict[str, Any]) -> Workload:
        """The options' :class:`Workload` (one option per field, same names)."""
        return Workload(**{name: options[name] for name in FIELDS})

    def plan_from_options(self, options: dict[str, Any], *, sold_only: bool = True) -> Plan:
        """Size the options' workload on a node that can be built and sold (the chassis's
        slots and bays, the GPU's cooling and baseboard: :func:`sizing.bom.lines.check_node`,
        as the page checks it), or with ``sold_only=False`` (``size``, as the API) on a node
        that fits its chassis whatever the GPU's cooling
        (:func:`sizing.bom.lines.check_node_fits`): a consumer or workstation card is
        sized all the same and the summary marks the node as not sold
        (``node_buildable``). A :class:`SizingError` becomes exit status 2. A model
        answered by a fallback (the Hub off or unreachable, an earlier revision, the
        catalog's entry for a requested revision) is named on standard error, as the page
        shows its notice (:class:`~configurator.modelhub.services.ResolvedModel`)."""
        try:
            model = self._uploaded_model(options)
            if model is None:
                found = model_lookup(options["model"], revision=options.get("revision"))
                if found.notice:
                    self.stderr.write(f"{self._prog}: note: {found.notice}")
                model = found.spec
            plan = plan_create(self.workload_from_options(options), model=model)
            (check_node if sold_only else check_node_fits)(plan)
            return plan
        except SizingError as exc:
            raise CommandError(f"{flag_for(exc.field)}: {exc.message}", returncode=2) from exc

    def _uploaded_model(self, options: dict[str, Any]) -> ModelSpec | None:
        """The ``--config`` model (naming ``options["model"]`` after it), or ``None``."""
        if (options["model"] is None) == (options["config"] is None):
            raise CommandError(
                "--model/--config: give exactly one, a Hugging Face repo id or a config.json",
                returncode=2,
            )
        if options["config"] is None:
            if options["model_name"] is not None or options["weights_gib"] is not None:
                raise CommandError("--model-name/--weights-gib: only with --config", returncode=2)
            return None
        path = Path(options["config"])
        try:
            data = read_at_most(path, MAX_CONFIG_BYTES)  # a device or a weights file
            if data is None:
                raise CommandError(
                    f"--config: {path} is larger than {MAX_CONFIG_BYTES:,} bytes: give the "
                    "model's config.json, not its weights",
                    returncode=2,
                )
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise CommandError(f"--config: cannot read {path}: {reason}", returncode=2) from exc
        model = model_from_config_upload(
            config_text=text, model_name=options["model_name"], weights_gib=options["weights_gib"]
        )
        options["model"] = model.repo_id
        return model
