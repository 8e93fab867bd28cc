"""The engine's bundled data files (``sizing/data/``), read from the source tree.

``importlib.resources`` would find them the same way for this plain package, but
importing it costs a measurable share of a command's start-up; the files sit beside
this module.
"""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"


def data_text(name: str) -> str:
    """The UTF-8 text of ``sizing/data/<name>``.

    Raises:
        OSError: the file is missing or unreadable.
    """
    return (DATA_DIR / name).read_text("utf-8")
