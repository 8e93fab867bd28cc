"""pytest fixtures that point the configurator at a recorded Hub on 127.0.0.1.

Settings change through pytest-django's ``settings`` fixture, so nothing leaks into
other tests; the ``huggingface_hub`` library itself is used unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from pytest_django import Settings

from tests.hubserver.server import RecordedHub, serve

STALL_TIMEOUT_SECONDS = 1.0
"""The lookup deadline in tests with a hanging Hub (production: HF_TIMEOUT_SECONDS 10)."""


@pytest.fixture
def hub(settings: Settings) -> Iterator[RecordedHub]:
    """A recorded Hub that answers at once; ``HF_ENDPOINT`` points at it.

    The cache starts empty: no failure remembered from an earlier server on this port.
    """
    cache.clear()
    with serve() as recorded:
        settings.HF_ENDPOINT = recorded.url
        settings.HF_TOKEN = None
        settings.HF_HUB_OFFLINE = False
        yield recorded


@pytest.fixture
def stalled_hub(settings: Settings) -> Iterator[RecordedHub]:
    """A Hub that accepts connections and never answers, with a 1 s lookup deadline."""
    cache.clear()
    with serve(stall=True) as recorded:
        settings.HF_ENDPOINT = recorded.url
        settings.HF_TOKEN = None
        settings.HF_HUB_OFFLINE = False
        settings.HF_TIMEOUT_SECONDS = STALL_TIMEOUT_SECONDS
        yield recorded
