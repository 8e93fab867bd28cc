"""Shell scripts from argv lists and environment dicts.

Every value is quoted with :func:`shlex.quote`, so a path or a JSON document reaches
the program as exactly one argument; an :class:`EnvRef` is written ``"$NAME"``, expanded
by the shell and still one argument. Scripts start with ``set -euo pipefail`` (bash
manual, "The Set Builtin") so a failing step stops the script.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence

SHEBANG = "#!/usr/bin/env bash"
HERE = 'HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"'
"""Sets ``$HERE`` to the script's directory, for files shipped beside it."""
_SAFE_NAME = re.compile(r"[A-Za-z0-9._/-]+")


class EnvRef(str):
    """An argument the shell takes from an environment variable: written ``"$NAME"``
    (double-quoted, so its value stays one argument), never quoted literally."""

    __slots__ = ()

    def __new__(cls, name: str) -> EnvRef:
        if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
            raise ValueError(f"not an environment variable name: {name!r}")
        return super().__new__(cls, f'"${name}"')


def _quote(arg: str) -> str:
    return str.__str__(arg) if isinstance(arg, EnvRef) else shlex.quote(arg)


def command(argv: Sequence[str], *, indent: str = "  ") -> str:
    """``argv`` as one shell command, one option per continuation line.

    A flag and its value stay on one line (``--flag=value`` counts as complete), and
    so do the further numbers of a list-valued flag; each element is quoted.
    """
    if not argv:
        raise ValueError("argv must not be empty")
    parts: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if arg.startswith("-") and "=" not in arg and nxt is not None and not nxt.startswith("-"):
            values = [nxt]
            # A list of numbers (``--numa-bind-nodes 0 0 1 1``) stays on its flag's line.
            while nxt.isdigit() and i + 1 + len(values) < len(argv):
                more = argv[i + 1 + len(values)]
                if not more.isdigit():
                    break
                values.append(more)
            parts.append(" ".join(_quote(a) for a in (arg, *values)))
            i += 1 + len(values)
        else:
            parts.append(_quote(arg))
            i += 1
    return (" \\\n" + indent).join(parts)


def script(
    *,
    title: str,
    steps: Sequence[Sequence[str] | str] = (),
    env: Mapping[str, str] | None = None,
    env_here: Mapping[str, str] | None = None,
    exec_argv: Sequence[str] | None = None,
    comments: Sequence[str] = (),
    here: bool = False,
) -> str:
    """A bash script: a title, comments, exported variables, commands, an ``exec``.

    Args:
        title: first comment line.
        steps: commands run in order before ``exec_argv``; a plain string is a raw
            shell line (for ``${VAR:?}`` checks), a list is quoted.
        env: variables exported with quoted literal values.
        env_here: variables whose value is a file name beside the script.
        exec_argv: the long-running program, started with ``exec``.
        comments: extra comment lines under the title.
        here: define ``$HERE`` (the script's directory) even without ``env_here``.
    """
    lines = [SHEBANG, f"# {title}"]
    lines += [f"# {c}" if c else "#" for c in comments]
    lines.append("set -euo pipefail")
    if env_here or here:
        lines.append(HERE)
        for k, v in (env_here or {}).items():
            if not _SAFE_NAME.fullmatch(v):
                raise ValueError(f"file name {v!r} must be letters, digits, '.', '_', '-', '/'")
            lines.append(f'export {k}="$HERE/{v}"')
    lines += [f"export {k}={shlex.quote(v)}" for k, v in (env or {}).items()]
    lines += [step if isinstance(step, str) else command(step) for step in steps]
    if exec_argv:
        lines.append("exec " + command(exec_argv))
    return "\n".join(lines) + "\n"
