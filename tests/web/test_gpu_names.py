"""The page, the CLI and the quote PDF name a GPU alike: by its catalog name.

Expected names: ``sizing/data/hardware.json`` (``name`` of each GPU), read through
``sizing.hardware.catalog``, never typed in.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from django.utils import translation

from configurator.quotes.document import document_from_quote
from configurator.quotes.pdf import quote_pdf_render
from configurator.quotes.pricing import alternative_label
from configurator.quotes.services import quote_create_from_inquiry
from sizing.hardware import catalog
from sizing.workload import SEED_WORKLOAD
from tests.quote_factories import make_inquiry, make_presales
from tests.seed_form import seed_form
from tests.web.test_pdf import pdf_pages
from tests.web.test_size_command import SEED_ARGS

pytestmark = pytest.mark.django_db

SEED_GPU = catalog.gpu("rtx-pro-6000-se").name


@pytest.mark.parametrize("slug", sorted(catalog.gpus()))
def test_a_quote_alternative_is_titled_with_the_catalog_name(slug: str) -> None:
    workload = dataclasses.replace(SEED_WORKLOAD, gpu=slug)
    with translation.override("en"):
        label = alternative_label(workload)
    assert label.startswith(f"{workload.gpus_per_node} × {catalog.gpu(slug).name}, ")


def test_page_cli_and_pdf_name_the_seed_gpu_alike(
    client: Client, settings: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    settings.HF_HUB_OFFLINE = True
    cache.clear()
    page = client.post("/estimate/", seed_form(), headers={"Accept-Language": "en"})
    call_command("size", *SEED_ARGS)
    cli = capsys.readouterr().out
    make_presales()
    quote = quote_create_from_inquiry(inquiry=make_inquiry(), user=None)
    pdf = " ".join(" ".join(pdf_pages(quote_pdf_render(document_from_quote(quote)))).split())
    assert f"4 × {SEED_GPU} in 1 node" in page.content.decode()
    assert f"4 x {SEED_GPU} per node, KV cache fp8" in cli
    assert f"4 × {SEED_GPU}, FP8 cache" in pdf  # the requested configuration's title
    assert f"4 GPUs ({SEED_GPU})" in pdf
    # Every "n × RTX PRO 6000 …" of the PDF is the catalog name.
    for named in re.findall(r"\d × (\S+ )?RTX PRO 6000", pdf):
        assert named == "NVIDIA ", pdf
