"""Command-line flags that say what they take: ``recommend --gpus`` needs a slug or
``all``, ``bundle --out`` and ``quote_pdf --out`` keep an existing file unless ``--force``,
and ``--help`` lists
only real choices (docs/cli.md)."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from configurator.catalog.services import pricelist_load_demo

SEED = ["--model", "Qwen/Qwen3-32B-FP8", "--context", "8192", "--users", "500"]


@pytest.mark.django_db
@pytest.mark.parametrize("given", ["", " ", ",", " , "])
def test_recommend_refuses_gpus_without_a_slug(
    capsys: pytest.CaptureFixture[str], given: str
) -> None:
    pricelist_load_demo()
    with pytest.raises(CommandError) as err:
        call_command("recommend", *SEED, "--gpus", given)
    assert err.value.returncode == 2
    assert str(err.value) == (
        f"--gpus: expected GPU slugs, comma-separated, or 'all', got {given!r}"
    )
    assert capsys.readouterr().out == ""


def bundle(out: Path, *extra: str) -> None:
    call_command("bundle", *SEED, "--engine", "vllm", "--out", str(out), *extra)


def test_bundle_writes_any_name_but_keeps_an_existing_file(tmp_path: Path) -> None:
    out = tmp_path / "bundle"  # no .zip: written all the same
    bundle(out)
    assert zipfile.is_zipfile(out)
    mine = tmp_path / "notes.txt"
    mine.write_text("keep me")
    with pytest.raises(CommandError) as err:
        bundle(mine)
    assert err.value.returncode == 2
    assert str(err.value) == f"--out: {mine} exists; give --force to replace it"
    assert mine.read_text() == "keep me"


def test_bundle_force_replaces_the_file(tmp_path: Path) -> None:
    out = tmp_path / "bundle.zip"
    out.write_text("old")
    bundle(out, "--force")
    assert zipfile.is_zipfile(out)


@pytest.mark.django_db
def test_quote_pdf_keeps_an_existing_file_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "quote.pdf"
    out.write_text("keep me")
    args = ["quote_pdf", *SEED, "--customer", "ACME", "--out", str(out)]
    with pytest.raises(CommandError) as err:
        call_command(*args)
    assert err.value.returncode == 2
    assert str(err.value) == f"--out: {out} exists; give --force to replace it"
    assert out.read_text() == "keep me"
    call_command(*args, "--force")
    assert out.read_bytes().startswith(b"%PDF")


@pytest.mark.parametrize("command", ["size", "recommend", "bundle", "quote_pdf", "verify"])
def test_help_lists_no_empty_choice_and_says_the_default_in_words(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    with pytest.raises(SystemExit):
        call_command(command, "--help")
    text = capsys.readouterr().out
    assert "--serving-engine {vllm,lmcache,sglang,dynamo}" in text
    assert "{," not in text and ",}" not in text and "(default: )" not in text
    assert "(not given: the largest allocation of any)" in " ".join(text.split())


def test_every_bundle_option_says_what_it_takes(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse prints an option without help text as its name (and metavar) alone; each of
    # bundle's own options carries a description (docs/cli.md), the tier options the one
    # sizing/engines/shared_tier.py gives TierOptions.
    with pytest.raises(SystemExit):
        call_command("bundle", "--help")
    text = capsys.readouterr().out
    options = text.split("options:", 1)[1]
    entries = re.split(r"\n(?=  -)", options)
    bare = [e.strip() for e in entries if len(e.split()) <= 2 and e.strip().startswith("--")]
    assert bare == []
    flat = " ".join(options.split())
    assert "--shared {none,nfs,s3} shared tier: none, an NFS/pNFS export or an S3 bucket" in flat
    assert "--nfs-server NFS_SERVER NAS host name (default: nas.example.internal)" in flat
    assert "--engine {vllm,lmcache,lmcache-server,sglang,dynamo,llm-d,all} engine" in flat


@pytest.mark.django_db
def test_a_revision_answered_by_the_catalog_is_named_on_stderr(settings) -> None:  # type: ignore[no-untyped-def]
    # configurator/modelhub/services.py: with the Hub off, a catalog model asked for at a
    # revision is sized with the catalog's entry and the answer carries a notice; the
    # page shows it, and the CLI names it on standard error, keeping stdout JSON.
    settings.HF_HUB_OFFLINE = True
    out, err = io.StringIO(), io.StringIO()
    call_command("size", "--model", "Qwen/Qwen3-32B-FP8", "--context", "8192", "--users",
                 "500", "--revision", "v2", "--format", "json", stdout=out, stderr=err)  # fmt: skip
    assert json.loads(out.getvalue())["summary"]["model"] == "Qwen/Qwen3-32B-FP8"
    assert err.getvalue().strip() == (
        "size: note: This installation does not contact the Hugging Face Hub "
        "(HF_HUB_OFFLINE); Qwen/Qwen3-32B-FP8 at revision 'v2' is sized with the offline "
        "catalog's entry."
    )
    quiet = io.StringIO()
    call_command("size", "--model", "Qwen/Qwen3-32B-FP8", "--context", "8192", "--users",
                 "500", "--format", "json", stdout=io.StringIO(), stderr=quiet)  # fmt: skip
    assert quiet.getvalue() == ""  # the catalog answers a request without a revision


def test_size_refuses_a_node_that_cannot_be_built() -> None:
    # hardware.json: HGX H100 baseboards come with 4 or 8 GPUs (sizing/hardware/chassis.py), as
    # the page and the API refuse 3.
    with pytest.raises(CommandError) as caught:
        call_command("size", "--model", "Qwen/Qwen3-8B", "--context", "8192", "--users",
                     "5", "--gpu", "h100-sxm", "--gpus-per-node", "3")  # fmt: skip
    assert caught.value.returncode == 2
    assert str(caught.value) == (
        "--gpus-per-node: the NVIDIA H100 SXM5 80GB comes on baseboards of 4, 8 GPUs only, "
        "got 3 per node"
    )
