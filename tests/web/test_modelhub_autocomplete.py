"""``/models/autocomplete/``: suggestions for the model field from the catalog and the cache."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from pytest_django import DjangoAssertNumQueries

from configurator.modelhub.services import model_lookup
from tests.hubserver.server import RecordedHub

pytestmark = pytest.mark.django_db
URL = reverse("modelhub:autocomplete")


def test_htmx_request_gets_only_option_elements(
    client: Client, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    with django_assert_num_queries(1):
        response = client.get(URL, {"q": "qwen3-32b"}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and "<datalist" not in html
    # sizing/data/models.json holds Qwen/Qwen3-32B and Qwen/Qwen3-32B-FP8.
    assert '<option value="Qwen/Qwen3-32B" data-origin="catalog">' in html
    assert '<option value="Qwen/Qwen3-32B-FP8" data-origin="catalog">' in html
    assert "Llama" not in html


def test_models_looked_up_on_the_hub_are_suggested_after_the_catalog(
    client: Client, hub: RecordedHub
) -> None:
    model_lookup("Qwen/Qwen3-8B-FP8")  # recorded Hub repo, not in the catalog
    hub.requests.clear()
    response = client.get(URL, {"q": "qwen3-8b"}, headers={"HX-Request": "true"})
    html = response.content.decode()
    catalog_at = html.index('value="Qwen/Qwen3-8B"')
    cached_at = html.index('<option value="Qwen/Qwen3-8B-FP8" data-origin="cache">')
    assert catalog_at < cached_at
    assert hub.requests == []  # suggestions never contact the Hub


def test_customer_form_field_name_is_accepted(client: Client) -> None:
    response = client.get(URL, {"model": "gpt-oss"}, headers={"HX-Request": "true"})
    # sizing/data/models.json: openai/gpt-oss-20b and openai/gpt-oss-120b.
    assert response.content.decode().count("<option ") == 2


def test_without_javascript_a_full_search_page_is_served(client: Client) -> None:
    response = client.get(URL, {"q": "gemma-3"})
    assert response.status_code == 200
    html = response.content.decode()
    assert f'action="{URL}"' in html
    assert f'hx-get="{URL}"' in html
    assert "<li>google/gemma-3-27b-it" in html


def test_no_match_says_any_repo_id_can_be_entered(client: Client) -> None:
    response = client.get(URL, {"q": "zzz-no-such"})
    assert "Any Hugging Face repo id can still be entered" in response.content.decode()


def test_too_long_query_is_a_400_with_the_field_error(client: Client) -> None:
    response = client.get(URL, {"q": "x" * 201}, headers={"Accept-Language": "en"})
    assert response.status_code == 400
    assert "at most 200 characters" in response.content.decode()


def test_post_is_not_allowed(client: Client) -> None:
    assert client.post(URL, {"q": "qwen"}).status_code == 405


def test_gated_models_looked_up_with_a_token_are_not_suggested(
    client: Client, hub: RecordedHub, settings: Any
) -> None:
    # tests/hubserver/recorded/meta-llama--Llama-3.1-8B.json: gated (manual), shared with
    # the recorded token only.
    llama = hub.repos["meta-llama/Llama-3.1-8B"]
    settings.HF_TOKEN = llama["requires_token"]
    assert model_lookup("meta-llama/Llama-3.1-8B").gated == "manual"
    model_lookup("Qwen/Qwen3-8B-FP8")  # open
    response = client.get(URL, {"q": "8b"}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert 'value="meta-llama/Llama-3.1-8B"' not in html
    assert 'value="Qwen/Qwen3-8B-FP8" data-origin="cache"' in html
