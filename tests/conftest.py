"""Fixtures shared by the whole suite.

Services: with ``CI=true`` a missing PostgreSQL or Redis fails the run; elsewhere tests
that need a real broker are skipped when ``CELERY_BROKER_URL`` is not set.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

pytest_plugins = ["tests.hubserver.fixtures"]


def ci_requires(service: str) -> None:
    """Fail under CI, skip elsewhere, when ``service`` is not configured."""
    message = f"{service} is not configured"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message}, and CI=true requires it")
    pytest.skip(message)


@pytest.fixture
def broker_url() -> str:
    """The Redis broker URL of a real Celery worker (CI sets it)."""
    url = os.environ.get("CELERY_BROKER_URL")
    if not url:
        ci_requires("CELERY_BROKER_URL (Redis)")
    assert url
    return url


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """Run Celery tasks in-process for this test, also where a broker is configured.

    Tests of a task's effect use it; tests of the real worker (test_celery_worker.py) do
    not.
    """
    from configurator.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous
