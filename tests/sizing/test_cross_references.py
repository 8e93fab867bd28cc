"""Every cross-reference in the project's code and docs points at something that exists.

Docstrings, comments and docs name modules and their members as dotted paths
(``sizing.memory.host_memory.cpu_tier``, ``configurator.quotes.services``), files as
repository paths (``sizing/memory/nvme.py``) and sections of the rules page as
``docs/sizing.md §N``. A rename that leaves one of them behind sends a reader nowhere;
this test reads every reference and resolves it from the source files alone (no import,
so it needs no Django).
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCANNED_DIRS = ("sizing", "configurator", "tests", "benchmarks", "docs", "templates")
SCANNED_SUFFIXES = (".py", ".md", ".html", ".toml")

DOTTED = re.compile(r"(?<![\w./-])((?:sizing|configurator)(?:\.[A-Za-z_]\w*)+)")
NOT_MODULES = ("sizing.md", "configurator.example.com")
"""Dotted words that are a file name and a host name, not module paths."""
PATH = re.compile(
    r"(?<![\w./-])((?:sizing|configurator|tests|benchmarks|docs|templates|static)"
    r"/[\w./-]*\.(?:py|md|json|html|css|csv|po))(?![\w/])"
)
SECTION = re.compile(r"docs/sizing\.md (§\d+(?: and §\d+)*)")


def scanned_files() -> list[Path]:
    """The project's own text files that may hold references."""
    files = [ROOT / "README.md", ROOT / "pyproject.toml", ROOT / "Makefile"]
    for top in SCANNED_DIRS:
        files += [p for p in (ROOT / top).rglob("*") if p.suffix in SCANNED_SUFFIXES]
    return [p for p in files if p.is_file() and p != Path(__file__).resolve()]


@cache
def defined_names(module_file: Path) -> dict[str, frozenset[str]]:
    """Top-level names a module defines, each with the member names a class defines."""
    tree = ast.parse(module_file.read_text(encoding="utf-8"))
    names: dict[str, frozenset[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    members.update(t.id for t in item.targets if isinstance(t, ast.Name))
            names[node.name] = frozenset(members)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names[node.name] = frozenset()
        elif isinstance(node, ast.Assign):
            names.update((t.id, frozenset()) for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = frozenset()
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((a.asname or a.name.split(".")[0], frozenset()) for a in node.names)
    return names


def module_file(dotted: str) -> Path | None:
    """The source file of a dotted module path, or ``None`` when there is none."""
    base = ROOT.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def resolves(reference: str) -> bool:
    """Whether a dotted reference names a module, or a name a module or class defines."""
    parts = reference.split(".")
    for cut in range(len(parts), 0, -1):
        found = module_file(".".join(parts[:cut]))
        if found is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        names = defined_names(found)
        if rest[0] not in names:
            return False
        # One level of class members is checked; deeper (an attribute's attribute) is
        # a value's, which the source alone does not tell.
        return len(rest) == 1 or not names[rest[0]] or rest[1] in names[rest[0]]
    return False


def sizing_sections() -> set[str]:
    """The numbered sections of docs/sizing.md (``## 4. ...`` is ``§4``)."""
    text = (ROOT / "docs" / "sizing.md").read_text(encoding="utf-8")
    return {f"§{m}" for m in re.findall(r"^## (\d+)\.", text, flags=re.M)}


def test_every_dotted_reference_names_a_module_or_a_name_it_defines() -> None:
    missing = sorted(
        {
            f"{path.relative_to(ROOT)}: {ref}"
            for path in scanned_files()
            for ref in DOTTED.findall(path.read_text(encoding="utf-8"))
            if ref not in NOT_MODULES and not resolves(ref.rstrip("."))
        }
    )
    assert missing == []


def test_every_repository_path_exists() -> None:
    missing = sorted(
        {
            f"{path.relative_to(ROOT)}: {ref}"
            for path in scanned_files()
            for ref in PATH.findall(path.read_text(encoding="utf-8"))
            if not (ROOT / ref).exists()
        }
    )
    assert missing == []


def test_every_rules_section_cited_exists() -> None:
    sections = sizing_sections()
    missing = sorted(
        {
            f"{path.relative_to(ROOT)}: {cited}"
            for path in scanned_files()
            for group in SECTION.findall(path.read_text(encoding="utf-8"))
            for cited in group.split(" and ")
            if cited not in sections
        }
    )
    assert missing == []


def test_the_resolver_refuses_what_does_not_exist() -> None:
    # The checks above would pass vacuously if nothing resolved or everything did.
    assert resolves("sizing.memory.host_memory")
    assert resolves("sizing.memory.host_memory.cpu_tier")
    assert resolves("sizing.layout.cluster.Cluster.needs_shared_tier")
    assert not resolves("sizing.host_memory")
    assert not resolves("sizing.memory.host_memory.no_such_rule")
    assert not resolves("sizing.layout.cluster.Cluster.no_such_member")
    assert "§4" in sizing_sections() and "§99" not in sizing_sections()
