"""``manage.py accuracy --kind ttft``: the report formats and bad input (exit status 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

DATA = Path(__file__).resolve().parents[2] / "sizing" / "data"
HELD_OUT = DATA / "ttft_cases_held_out.json"


def test_json_report_has_cases_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("accuracy", "--kind", "ttft", "--cases", str(HELD_OUT), "--format", "json")
    report = json.loads(capsys.readouterr().out)
    figures = {"median_abs_error_pct", "p90_abs_error_pct", "max_abs_error_pct", "evaluated"}
    assert set(report["summary"]) == figures | {"in_sample", "out_of_sample"}
    # No held-out case was fitted on: every one counts out-of-sample.
    assert report["summary"]["out_of_sample"]["evaluated"] == report["summary"]["evaluated"]
    assert report["summary"]["in_sample"]["evaluated"] == 0
    case = next(c for c in report["cases"] if c["id"] == "h20-cpu-64k")
    # agentic-kvc-h20-tiers: 272 ms for a 64K-token CPU-tier hit on one H20.
    assert case["measured"] == 272
    assert case["abs_error_pct"] == round(abs(case["predicted"] / 272 - 1) * 100, 2)


def test_markdown_and_text_reports(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("accuracy", "--kind", "ttft", "--cases", str(HELD_OUT), "--format", "markdown")
    text = capsys.readouterr().out
    assert "| blog-1b-cpu-100k | meta-llama/Llama-3.2-1B-Instruct | h100-sxm |" in text
    call_command("accuracy", "--kind", "ttft", "--cases", str(HELD_OUT))
    assert "out-of-sample (no constant fitted on them): evaluated: 5" in capsys.readouterr().out


def test_a_case_without_a_measured_basis_exits_2(tmp_path: Path) -> None:
    case = json.loads(HELD_OUT.read_text("utf-8"))["cases"][0]
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([dict(case, gpu="a100-sxm-80gb")]))
    with pytest.raises(CommandError) as err:
        call_command("accuracy", "--kind", "ttft", "--cases", str(path))
    assert err.value.returncode == 2
    assert str(err.value) == (
        "--cases: case blog-1b-cpu-10k: no measured basis for prefill on NVIDIA A100 SXM4 80GB"
    )
