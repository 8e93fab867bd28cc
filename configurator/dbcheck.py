"""Commands that need the database say so in one line when it is not set up.

A fresh checkout has no ``db.sqlite3``: connecting would create an empty file and the
first query would fail with ``no such table``. :func:`require_tables` checks first and
never creates the file.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError
from django.db import DatabaseError, connections
from django.db.models import Model


def missing_database_file(using: str = "default") -> str:
    """The path of the SQLite file ``using`` names when it does not exist, else ``""``.

    Opening such a database would create an empty file; callers that only read check
    this first (no query, no connection).
    """
    connection = connections[using]
    name = str(connection.settings_dict.get("NAME") or "")
    on_disk = name and not name.startswith((":memory:", "file:"))
    return name if connection.vendor == "sqlite" and on_disk and not Path(name).exists() else ""


def database_problem(*models: type[Model], using: str = "default") -> str:
    """Why the tables of ``models`` cannot be used (``""`` when they can).

    An SQLite file that does not exist is not opened (opening would create it).
    """
    missing_file = missing_database_file(using)
    if missing_file:
        return f"the database {missing_file} does not exist yet: run `manage.py migrate` first"
    connection = connections[using]
    try:
        tables = set(connection.introspection.table_names())
    except DatabaseError as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"the database cannot be reached ({first_line}): check DATABASE_URL"
    missing = sorted(m._meta.db_table for m in models if m._meta.db_table not in tables)
    if missing:
        return f"the database has no table {', '.join(missing)} yet: run `manage.py migrate` first"
    return ""


def require_tables(*models: type[Model]) -> None:
    """Raise a one-line ``CommandError`` (exit status 2) unless ``models`` can be used.

    Raises:
        CommandError: the database file is missing, unreachable or not migrated.
    """
    problem = database_problem(*models)
    if problem:
        raise CommandError(problem, returncode=2)
