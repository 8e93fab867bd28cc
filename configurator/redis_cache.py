"""Django's Redis cache with one client and one connection pool per process.

Django's :class:`~django.core.cache.backends.redis.RedisCache` builds a
``redis.Redis`` object for every cache operation, and each thread gets its own cache
object (``django.core.cache.caches`` is per thread) with its own connection pool: a
rate-limited estimate made two client objects, a background Hub lookup opened its own
pool. Here every cache object of a process that names the same server and options shares
one ``redis.Redis`` over one ``redis.ConnectionPool``. redis-py's client is thread-safe
(each command takes a connection from the pool and returns it), and its pool notices a
fork and opens new connections in the child, so a gunicorn worker forked from a master
that used the cache never shares a socket with it.

Settings: ``"BACKEND": "configurator.redis_cache.RedisCache"`` with Django's
``LOCATION`` and ``OPTIONS`` (passed to the pool, as Django's backend does).
"""

from __future__ import annotations

import threading
from typing import Any

import redis
from django.core.cache.backends import redis as django_redis

_clients: dict[tuple[str, str], redis.Redis] = {}
_clients_lock = threading.Lock()


class SharedRedisCacheClient(django_redis.RedisCacheClient):
    """Django's Redis cache client that hands out the process's one ``redis.Redis`` per
    server and pool options instead of a new one per operation."""

    def get_client(self, key: Any = None, *, write: bool = False) -> redis.Redis:
        """The process's client of the server Django picks for ``write`` (the first
        server for writes and with a single server)."""
        # Django's client keeps its servers and pool settings in attributes that
        # django-stubs does not declare.
        django_client: Any = self
        index = django_client._get_connection_pool_index(write)
        server, pool_class = django_client._servers[index], django_client._pool_class
        options = django_client._pool_options
        pool_key = (server, f"{pool_class!r} {sorted(options.items(), key=lambda kv: kv[0])!r}")
        client = _clients.get(pool_key)
        if client is None:
            with _clients_lock:
                client = _clients.get(pool_key)
                if client is None:
                    pool = pool_class.from_url(server, **options)
                    client = _clients[pool_key] = redis.Redis(connection_pool=pool)
        return client


class RedisCache(django_redis.RedisCache):
    """Django's Redis cache backend over :class:`SharedRedisCacheClient`."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedRedisCacheClient
