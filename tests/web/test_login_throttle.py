"""Sign-in throttling with django-axes on the presales login and the admin login."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

EN = {"Accept-Language": "en"}


@pytest.fixture
def staff(django_user_model: Any, settings: Any) -> Any:
    # A fast hasher: these tests sign in a dozen times; the throttling is the same.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return django_user_model.objects.create_user(
        "presales", password="right-password", is_staff=True, is_superuser=True
    )


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_five_failures_lock_the_user_name_for_that_address(
    client: Client, staff: Any, settings: Any, path: str
) -> None:
    # settings.AXES_FAILURE_LIMIT = 5 (configurator/settings.py).
    assert settings.AXES_FAILURE_LIMIT == 5
    for _ in range(4):
        wrong = client.post(path, {"username": "presales", "password": "wrong"}, headers=EN)
        assert wrong.status_code == 200  # the form again, with its error
    fifth = client.post(path, {"username": "presales", "password": "wrong"}, headers=EN)
    assert fifth.status_code == 429  # the fifth failure locks
    locked = client.post(path, {"username": "presales", "password": "right-password"}, headers=EN)
    assert locked.status_code == 429
    assert "Sign-in locked" in locked.content.decode()
    assert "_auth_user_id" not in client.session
    # Another address is not locked out.
    other = Client(REMOTE_ADDR="192.0.2.99")
    ok = other.post(path, {"username": "presales", "password": "right-password"})
    assert ok.status_code == 302


def test_a_successful_login_before_the_limit_resets_the_count(client: Client, staff: Any) -> None:
    for _ in range(4):
        client.post("/accounts/login/", {"username": "presales", "password": "wrong"})
    ok = client.post("/accounts/login/", {"username": "presales", "password": "right-password"})
    assert ok.status_code == 302
    client.logout()
    for _ in range(4):
        client.post("/accounts/login/", {"username": "presales", "password": "wrong"})
    again = client.post("/accounts/login/", {"username": "presales", "password": "right-password"})
    assert again.status_code == 302
