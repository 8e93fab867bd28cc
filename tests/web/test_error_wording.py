"""Error sentences that say what is wrong with the value given: an unknown model worded
once, a huge number quoted short, a long integer as typed (never through a float).

Limits quoted: 1,000,000 users (``sizing/workload.py``), weights at most
``configurator.modelhub.upload.MAX_WEIGHTS_GIB`` GiB.
"""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from configurator.modelhub.upload import MAX_WEIGHTS_GIB
from tests.seed_form import seed_form
from tests.web.test_customer_upload import SEED_CONFIG, config_file

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
EN = {"Accept-Language": "en"}
DE = {"Accept-Language": "de"}
UNKNOWN = "nobody/no-such-model"
SEED_MODEL = ["--model", "Qwen/Qwen3-32B-FP8", "--context", "8192"]


@pytest.fixture(autouse=True)
def _offline(settings: Any) -> None:
    settings.HF_HUB_OFFLINE = True


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<p id="id_{field}_error"[^>]*>([^<]*)</p>', html)
    assert match, f"no error slot for {field}"
    return html_lib.unescape(match.group(1))


def visible_text(html: str) -> str:
    """The page's text without tags and attribute values (the input echoes the id)."""
    return html_lib.unescape(re.sub(r"<[^>]*>", " ", html))


@pytest.mark.parametrize("headers", [{**HTMX, **EN}, EN, {**HTMX, **DE}], ids=str)
def test_an_unknown_model_is_worded_once_and_the_box_points_to_the_field(
    client: Client, headers: dict[str, str]
) -> None:
    response = client.post("/estimate/", seed_form(model=UNKNOWN), headers=headers)
    html = response.content.decode()
    message = field_error(html, "model")
    assert UNKNOWN in message
    assert visible_text(html).count(message) == 1
    box = re.search(r'<div class="problem" role="alert">(.*?)</div>', html, re.S)
    assert box is not None
    assert '<a href="#id_model">' in box.group(1)
    assert UNKNOWN not in box.group(1)


@pytest.mark.parametrize(
    ("headers", "quoted", "limit"),
    [(EN, "got 1e+308", "100,000 GiB"), (DE, "eingegeben: 1e+308", "100.000 GiB")],
)
def test_huge_weights_are_quoted_short(
    client: Client, headers: dict[str, str], quoted: str, limit: str
) -> None:
    assert MAX_WEIGHTS_GIB == 100_000
    data = seed_form(model="", weights_gib="1e308", config_file=config_file(SEED_CONFIG))
    response = client.post("/estimate/", data, headers=headers)
    assert response.status_code == 400
    message = field_error(response.content.decode(), "weights_gib")
    assert quoted in message and limit in message
    assert len(message) < 200


def test_the_cli_quotes_a_long_integer_as_typed() -> None:
    with pytest.raises(CommandError) as err:
        call_command("size", *SEED_MODEL, "--users", "99999999999999999999")
    assert err.value.returncode == 2
    assert "got 99,999,999,999,999,999,999" in str(err.value)
    assert "100,000,000,000,000,000,000" not in str(err.value)


def test_the_cli_quotes_huge_weights_short(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**SEED_CONFIG, "architectures": ["LlamaForCausalLM"]}))
    with pytest.raises(CommandError) as err:
        call_command(
            "size",
            "--config",
            str(path),
            "--context",
            "8192",
            "--users",
            "10",
            "--weights-gib",
            "1e308",
        )
    assert err.value.returncode == 2
    assert "got 1e+308" in str(err.value) and len(str(err.value)) < 200
