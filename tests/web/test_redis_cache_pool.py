"""One Redis client and connection pool per process for Django's cache
(configurator.redis_cache): the request threads and the background lookups share it.

The real-server test needs Redis (``CELERY_BROKER_URL``; CI sets it) and counts the
connections the server itself lists for a client name unique to the test.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from typing import Any

import redis
from django.core.cache import caches

from tests.web.ports import free_port


def _in_thread(call: Callable[[], Any]) -> Any:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(call()))
    thread.start()
    thread.join()
    return out[0]


def _redis_cache(settings: Any, location: str, **options: Any) -> None:
    settings.CACHES = {
        **settings.CACHES,
        "default": {
            "BACKEND": "configurator.redis_cache.RedisCache",
            "LOCATION": location,
            "OPTIONS": options,
        },
    }


def test_every_thread_and_operation_gets_the_same_client(settings: Any) -> None:
    # No server is needed: a redis-py client connects on its first command.
    _redis_cache(settings, f"redis://127.0.0.1:{free_port()}/0")
    here = caches["default"]
    there = _in_thread(lambda: caches["default"])
    assert here is not there  # Django's cache objects are per thread
    client = here._cache.get_client(write=True)  # type: ignore[attr-defined]
    assert here._cache.get_client() is client  # type: ignore[attr-defined]
    assert there._cache.get_client(write=True) is client
    assert _in_thread(lambda: caches["default"]._cache.get_client()) is client  # type: ignore[attr-defined]


def test_other_servers_or_options_get_their_own_client(settings: Any) -> None:
    location = f"redis://127.0.0.1:{free_port()}/0"
    _redis_cache(settings, location)
    plain = caches["default"]._cache.get_client()  # type: ignore[attr-defined]
    _redis_cache(settings, location, socket_timeout=1.5)
    timed = caches["default"]._cache.get_client()  # type: ignore[attr-defined]
    _redis_cache(settings, location.replace("/0", "/1"))
    other_db = caches["default"]._cache.get_client()  # type: ignore[attr-defined]
    assert len({id(plain), id(timed), id(other_db)}) == 3
    assert timed.connection_pool.connection_kwargs["socket_timeout"] == 1.5


def test_a_hundred_operations_in_two_threads_use_one_connection(
    settings: Any, broker_url: str
) -> None:
    name = f"cache-pool-test-{secrets.token_hex(4)}"
    _redis_cache(settings, broker_url, client_name=name)
    key = f"cache-pool-test:{name}"

    def operations() -> int:
        cache = caches["default"]
        for i in range(25):
            cache.set(key, i, 30)
            assert cache.get(key) == i
        return 0

    operations()
    _in_thread(operations)  # after the first: the pool's idle connection is reused
    server = redis.Redis.from_url(broker_url)
    try:
        mine = [c for c in server.client_list() if c.get("name") == name]
        assert len(mine) == 1, mine  # Django's own backend opens one per thread
    finally:
        caches["default"].delete(key)
        server.close()
