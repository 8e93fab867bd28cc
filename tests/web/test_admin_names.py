"""The admin names the project's apps and their models in the staff member's language."""

from __future__ import annotations

import re

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import translation

pytestmark = pytest.mark.django_db


def test_every_app_of_the_project_has_a_german_name() -> None:
    ours = [a for a in apps.get_app_configs() if a.name.startswith("configurator.")]
    assert len(ours) == 7
    for app in ours:
        with translation.override("en"):
            english = str(app.verbose_name)
        with translation.override("de"):
            german = str(app.verbose_name)
        assert german != english, f"{app.name}: no German name in configurator/locale/de"


def test_the_german_admin_index_names_apps_and_models_in_german(client: Client) -> None:
    client.force_login(get_user_model().objects.create_superuser("boss", "b@example.com", "pw"))
    page = client.get("/admin/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    captions = set(re.findall(r"<caption>\s*<a [^>]*>([^<]+)</a>", page))
    models = set(re.findall(r'<th scope="row" id="[^"]+">\s*<a [^>]*>([^<]+)</a>', page))
    # The German of configurator/locale/de/LC_MESSAGES/django.po.
    assert {"Katalog", "Anfragen", "Modell-Hub", "Prüfung"} <= captions
    assert {"Catalog", "Inquiries", "Modelhub", "Verification"}.isdisjoint(captions)
    assert {
        "Preisliste",
        "Öffentliche Preise",
        "Zwischengespeicherte Hub-Modelle",
        "Messdatensätze",
        "Prüfberichte",
    } <= models
