"""The loop both command-line checkers share: read the lines, parse each, report.

``check_lines(path, engine, prefix, parse)`` reads FILE (JSON list of ``{"name",
"argv"}``), requires each argv to start with ``prefix``, calls ``parse(rest)`` with the
arguments after it, and prints ``<name>: accepted by <engine>``. A ``SystemExit`` from
argparse (its message captured from stderr) or any exception the engine raises is a
refusal: the line is named on stderr and the status is 1.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Callable


def check_lines(
    path: str, engine: str, prefix: list[str], parse: Callable[[list[str]], object]
) -> int:
    """Exit status 0 when ``engine`` accepts every line of ``path``, else 1 (module doc)."""
    with open(path, encoding="utf-8") as f:
        lines = json.load(f)
    for line in lines:
        name, argv = line["name"], line["argv"]
        if argv[: len(prefix)] != prefix:
            print(f"{name}: not a {' '.join(prefix)} command: {argv[:3]}", file=sys.stderr)
            return 1
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                parse(argv[len(prefix) :])
        except SystemExit:
            print(f"{name}: {engine} refuses: {err.getvalue().strip()[-500:]}", file=sys.stderr)
            return 1
        except Exception as exc:  # any refusal by the engine is the finding
            print(f"{name}: {engine} refuses: {exc!r}"[:800], file=sys.stderr)
            return 1
        print(f"{name}: accepted by {engine}")
    return 0
