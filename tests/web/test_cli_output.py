"""Commands that write a file refuse a bad ``--out`` with exit status 2 and one line."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from pypdf import PdfReader

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


def run(command: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", command, *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("command", ["quote_pdf", "bundle"])
def test_an_unwritable_out_fails_before_any_work(command: str) -> None:
    # The model is unknown too: the command opens --out before it sizes (or renders)
    # anything, so the refusal names --out (Linux's reason: no file can be made in /proc).
    customer = ["--customer", "ACME"] if command == "quote_pdf" else []
    result = run(command, "--model", "nobody/none", "--context", "8192", "--users", "5",
                 *customer, "--out", "/proc/q.pdf")  # fmt: skip
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.endswith(
        f"{command}: error: --out: cannot write /proc/q.pdf: No such file or directory"
    )


def test_a_failed_run_leaves_no_new_file_and_keeps_an_old_one(tmp_path: Path) -> None:
    new, old = tmp_path / "new.pdf", tmp_path / "old.pdf"
    old.write_bytes(b"an earlier quote")
    for out, force in ((new, []), (old, ["--force"])):
        # 0 users: refused by the sizing (users must be between 1 and 1,000,000)
        result = run("quote_pdf", *SEED[:4], "--users", "0", "--customer", "ACME",
                     "--out", str(out), *force)  # fmt: skip
        assert result.returncode == 2 and "--users" in result.stderr
    assert not new.exists()
    assert old.read_bytes() == b"an earlier quote"


def test_a_replaced_file_holds_only_the_new_content(tmp_path: Path) -> None:
    out = tmp_path / "q.pdf"
    out.write_bytes(b"x" * 10_000_000)  # longer than the quote: nothing of it may remain
    result = run("quote_pdf", *SEED, "--customer", "ACME", "--out", str(out), "--force")
    assert result.returncode == 0, result.stderr
    data = out.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")


@pytest.mark.parametrize(
    ("customer", "expected"),
    [
        # configurator/inquiries/contact.py HIDDEN_CHARACTERS: the quote request's name
        # field refuses them too; an escape sequence would recolour a terminal.
        ("ACME\x1b[31m", "--customer: remove the invisible control character U+001B"),
        ("ACME\u202eEMCA", "--customer: remove the invisible control character U+202E"),
        # contact.py MAX_NAME_CHARS: 200, the quote request's name and company fields.
        ("W" * 201, "--customer: at most 200 characters, got 201"),
    ],
)
def test_a_customer_the_quote_request_would_refuse_is_one_line_exit_2(
    tmp_path: Path, customer: str, expected: str
) -> None:
    out = tmp_path / "q.pdf"
    result = run("quote_pdf", *SEED, "--customer", customer, "--out", str(out))
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.endswith(f"quote_pdf: error: {expected}")
    assert not out.exists()


@pytest.mark.django_db
def test_a_customer_on_two_lines_is_one_line_on_the_quote(tmp_path: Path) -> None:
    # contact.py one_line: the quote request's company field turns line breaks into spaces,
    # and --customer takes what that field takes (docs/cli.md).
    out = tmp_path / "q.pdf"
    stdout = io.StringIO()
    call_command("quote_pdf", *SEED, "--customer", "ACME\nResearch", "--out", str(out),
                 "--language", "en", stdout=stdout)  # fmt: skip
    assert stdout.getvalue().strip() == f"DRAFT quote for ACME Research written to {out}"
    pages = PdfReader(io.BytesIO(out.read_bytes())).pages
    assert "ACME Research" in " ".join(" ".join(p.extract_text() for p in pages).split())


@pytest.mark.parametrize("customer", ["", "   ", "\u200b\u200b", "\n"])
def test_a_customer_a_reader_cannot_see_is_refused(tmp_path: Path, customer: str) -> None:
    # contact.py visible(): white space and zero-width characters count as empty, as in
    # the quote request's required name field.
    out = tmp_path / "q.pdf"
    with pytest.raises(CommandError) as caught:
        call_command("quote_pdf", *SEED, "--customer", customer, "--out", str(out))
    assert (str(caught.value), caught.value.returncode) == ("--customer: must not be empty", 2)
    assert not out.exists()
