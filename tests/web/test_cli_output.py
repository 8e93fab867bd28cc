"""Commands that write a file refuse a bad ``--out`` with exit status 2 and one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED = ["--model", "Qwen/Qwen3-32B-FP8", "--context", "8192", "--users", "500"]


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        ("{tmp}", "is a directory"),
        ("{tmp}/missing/q.pdf", "does not exist"),
        ("/proc/q.pdf", "cannot write /proc/q.pdf"),
    ],
)
def test_quote_pdf_names_a_bad_out(tmp_path: Path, out: str, expected: str) -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "quote_pdf", *SEED, "--customer", "ACME", "--out",
         out.format(tmp=tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--out:" in lines[0] and expected in lines[0], result.stderr
