"""Per-model stores: results of pure functions of a model, kept per model object so that
the plans of one configuration search (and of the requests after it) that ask for the
same figures compute them once.

A store is a dict keyed by a tuple that starts with ``id(model)``; the stored model
object guards against an id reused by another object after the first one is gone.
Catalog specs are shared objects, so a process computes each figure once per model; a
copied spec is a new object and shares nothing. A store starts again once it holds
:data:`KEPT_MAX` entries, so a long-running server holds a bounded amount.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sizing.model.spec import ModelSpec

T = TypeVar("T")

KEPT_MAX = 256
"""Entries a per-model store keeps before it starts again: a configuration search binds
about 160 (GPU, TP) combinations of one workload."""


def kept(
    store: dict[Any, tuple[ModelSpec, T]], model: ModelSpec, key: Any, build: Callable[[], T]
) -> T:
    """``build()``, kept in ``store`` under ``key`` for the model object ``model`` (keys
    start with ``id(model)``; the stored object guards against a reused id). The store
    starts again once it holds :data:`KEPT_MAX` entries. Nothing is kept when ``build``
    raises."""
    hit = store.get(key)
    if hit is None or hit[0] is not model:
        if len(store) >= KEPT_MAX:
            store.clear()
        hit = store[key] = (model, build())
    return hit[1]
