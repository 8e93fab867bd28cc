"""``manage.py accuracy --kind ttft``: the report formats and bad input (exit status 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

DATA = Path(__file__).resolve().parents[2] / "sizing" / "data"
HELD_OUT = DATA / "ttft_cases_held_out.json"


def test_json_report_has_cases_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("accuracy", "--kind", "ttft", "--cases", str(HELD_OUT), "--format", "json")
    report = json.loads(capsys.readouterr().out)
    figures = {"median_abs_error_pct", "p90_abs_error_pct", "max_abs_error_pct", "evaluated"}
    counts = {"not_evaluated", "evaluated_share_pct"}
    assert set(report["summary"]) == figures | counts | {"in_sample", "out_of_sample"}
    assert report["not_evaluated"] == []
    assert report["summary"]["evaluated_share_pct"] == 100.0
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
    assert "out-of-sample (no constant fitted on them): evaluated: 8" in capsys.readouterr().out


def test_cases_it_cannot_evaluate_are_listed_and_the_rest_evaluated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = json.loads(HELD_OUT.read_text("utf-8"))["cases"][0]
    cases = [
        good,
        dict(good, id="no-engine", engine="trtllm"),
        dict(good, id="no-metric", metric="tpot"),
        dict(good, id="wrong-type", prompt_tokens="many"),
        dict(good, id="no-model", model_id=["a", "b"]),
    ]
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    call_command("accuracy", "--kind", "ttft", "--cases", str(path), "--format", "json")
    report = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in report["cases"]] == [good["id"]]
    reasons = {n["id"]: n["reason"] for n in report["not_evaluated"]}
    assert list(reasons) == ["no-engine", "no-metric", "wrong-type", "no-model"]
    assert reasons["no-engine"].startswith("case no-engine: no measured basis for engine")
    assert "prompt_tokens must be an integer" in reasons["wrong-type"]
    # One of five cases evaluated: 20 % (the command exits normally).
    assert report["summary"]["evaluated"] == 1
    assert report["summary"]["not_evaluated"] == 4
    assert report["summary"]["evaluated_share_pct"] == 20.0
    call_command("accuracy", "--kind", "ttft", "--cases", str(path))
    text = capsys.readouterr().out
    assert "not evaluated: case no-metric: metric must be one of" in text
    assert "not evaluated: 4 (evaluated share 20.0 %)" in text


def test_a_file_of_cases_none_can_be_evaluated_still_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([{"id": "empty"}]))
    for fmt in ("text", "markdown"):
        call_command("accuracy", "--kind", "ttft", "--cases", str(path), "--format", fmt)
        assert "case empty: missing model_id" in capsys.readouterr().out
    call_command("accuracy", "--kind", "traffic", "--cases", str(path))
    out = capsys.readouterr().out
    assert "not evaluated empty: " in out
    assert "not evaluated: 1 (evaluated share 0.0 %)" in out


def test_markdown_sets_aiconfigurator_beside_the_model_on_the_misses_it_supports(
    capsys: pytest.CaptureFixture[str],
) -> None:
    call_command("accuracy", "--kind", "ttft", "--cases", str(HELD_OUT), "--format", "markdown")
    text = capsys.readouterr().out
    # sizing/data/aiconfigurator_ttft.json: 514.487 ms for the NIM 5,000-token miss on
    # 2 × H100 at TP 2, measured 406.77 ms: |514.487 / 406.77 − 1| = 26.5 %.
    row = next(
        ln for ln in text.splitlines() if ln.startswith("| nim-70b-fp8-tp2-miss-5000 | 406.8")
    )
    assert row.endswith("| 514.5 | 26.5 |")
    assert "Median |error| over these 3: this model" in text
