"""Run every benchmark module and write ``docs/benchmarks.md`` with the machine and date.

Each module ``benchmarks/bench_*.py`` defines ``run() -> list[Result]``; a result names
the figure, its value with unit, and the target it is measured against.
``python -m benchmarks.run bench_x bench_y`` runs those modules only: their rows replace
the rows of the same area and figure in the table, every other row and section stays,
and the run is noted with its machine and load under "Rows measured again".
"""

from __future__ import annotations

import datetime as dt
import importlib
import os
import pkgutil
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Result:
    """One measured figure."""

    area: str
    figure: str
    value: str
    target: str
    met: bool


def machine() -> str:
    """A one-line description of this machine."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{cpu}, {os.cpu_count()} cores, {mem_gib:.0f} GiB RAM, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}"
    )


def _kept_sections(path: Path) -> str:
    """The hand-written sections of ``path`` (from its first ``## `` heading on), kept
    when the table above them is measured again."""
    if not path.exists():
        return ""
    text = path.read_text(encoding="utf-8")
    start = text.find("\n## ")
    return "" if start < 0 else text[start:]


def _row(r: Result) -> str:
    return f"| {r.area} | {r.figure} | {r.value} | {r.target} | {'yes' if r.met else 'no'} |"


def _merged_rows(table: list[str], results: list[Result]) -> list[str]:
    """The rows of ``table`` (its lines, header included) with those of ``results`` put
    in place: a row of the same area and figure is replaced, a new one added after the
    last row of its area (or at the end), every other row kept as measured before."""
    old = [line for line in table if line.startswith("| ") and not line.startswith("| area |")]
    rows = list(old)
    for r in results:
        key = f"| {r.area} | {r.figure} |"
        same = [i for i, line in enumerate(rows) if line.startswith(key)]
        if same:
            rows[same[0]] = _row(r)
            continue
        area = [i for i, line in enumerate(rows) if line.startswith(f"| {r.area} |")]
        rows.insert(area[-1] + 1 if area else len(rows), _row(r))
    return rows


RERUN_HEADING = "## Rows measured again"
"""The section of ``docs/benchmarks.md`` that lists runs of some modules only."""

TABLE_HEADER = ("| area | figure | value | target | met |", "|---|---|---|---|---|")


def _rewrite_rows(path: Path, results: list[Result], only: list[str], load_before: str) -> None:
    """Put the rows of a run of some modules (``only``) into ``path``'s table in place,
    keep the rest of the file, and note the run under :data:`RERUN_HEADING`."""
    text = path.read_text(encoding="utf-8")
    head, sep, rest = text.partition("\n## ")
    table = [line for line in head.splitlines() if line.startswith("|")]
    rows = _merged_rows(table, results)
    first = head.index(table[0]) if table else len(head)
    last = head.index(table[-1]) + len(table[-1]) if table else len(head)
    head = head[:first] + "\n".join([*TABLE_HEADER, *rows]) + head[last:]
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    note = (
        f"- {now}, `python -m benchmarks.run {' '.join(only)}`: {machine()}; load average "
        f"{load_before} at the start, {load_average()} at the end."
    )
    body = sep + rest
    if RERUN_HEADING in body:
        body = body.replace(RERUN_HEADING + "\n\n", RERUN_HEADING + "\n\n" + note + "\n", 1)
    else:
        body += f"\n{RERUN_HEADING}\n\n{note}\n"
    path.write_text(head + body, encoding="utf-8")
    print("\n".join(rows))


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, as ``/proc/loadavg`` gives them."""
    try:
        return " / ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "configurator.settings")
    load_before = load_average()
    import django

    django.setup()
    results: list[Result] = []
    only = sys.argv[1:]
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if not info.name.startswith("bench_") or (only and info.name not in only):
            continue
        module = importlib.import_module(f"benchmarks.{info.name}")
        print(f"running {info.name} …", flush=True)
        try:
            results.extend(module.run())
        except Exception as exc:  # one broken benchmark must not discard the others' figures
            print(f"{info.name} failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            results.append(Result(info.name, f"failed: {type(exc).__name__}", "-", "-", False))
    out = ROOT / "docs" / "benchmarks.md"
    if only and out.exists():
        _rewrite_rows(out, results, only, load_before)
        return 0
    lines = [
        "# Benchmarks",
        "",
        f"Measured with `make bench` on {dt.date.today().isoformat()}.",
        f"Machine: {machine()}.",
        f"Load average (1 / 5 / 15 min) at the start {load_before}, at the end "
        f"{load_average()}: the machine's {os.cpu_count()} cores are shared with other work.",
        "",
        "The machine is shared (two cores, other test runs beside these), so figures are CPU",
        "time wherever the work runs in one process: in-process figures sample",
        "`time.process_time_ns` (`benchmarks/timing.py`), the server's figures read the",
        "gunicorn workers' CPU time from `/proc`, and the CLI comparison takes the child",
        "processes' CPU time from `os.wait4` in the same run. Latencies under load are wall",
        "time by nature.",
        "",
        *TABLE_HEADER,
    ]
    lines += [_row(r) for r in results]
    out.write_text("\n".join(lines) + "\n" + _kept_sections(out), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
