"""Hub lookups off the request path, and failed lookups remembered for a while.

A web request (:class:`BackgroundLookupMiddleware`) never waits for the Hub: the first
request for an uncached model starts the lookup in a background thread and gets
:class:`~configurator.modelhub.errors.HubLookupPending` at once; the page polls, and a
later request finds the answer. At most ``HF_BACKGROUND_LOOKUPS`` lookups run at once
per process; one id is looked up once however many requests ask for it.

Answers wait in Django's cache (shared between processes when ``REDIS_CACHE_URL`` is
set) and in this process. Failures are remembered under a key of endpoint, token and
id: a definite one (not found, gated, unsupported) for ``HF_NEGATIVE_CACHE_SECONDS``,
an outage for ``HF_OUTAGE_CACHE_SECONDS``, so repeats answer at once. When the cache
is down, lookups still work; only the memory of failures is lost (logged).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

from configurator.clients import fail_open
from configurator.modelhub.errors import HubUnreachableError, ModelLookupError
from sizing.errors import gettext_noop

if TYPE_CHECKING:
    from configurator.modelhub.hub import HubClient, HubMetadata

logger = logging.getLogger(__name__)

_background: ContextVar[bool] = ContextVar("hub_lookups_in_background", default=False)
_lock = threading.Lock()
_in_flight: set[str] = set()
_answers: OrderedDict[str, HubMetadata] = OrderedDict()
_ANSWERS_KEPT = 256
_ANSWER_SECONDS = 600
_slots: threading.BoundedSemaphore | None = None


@contextmanager
def lookups_in_background() -> Iterator[None]:
    """Within this block, uncached models are looked up in the background."""
    token = _background.set(True)
    try:
        yield
    finally:
        _background.reset(token)


def in_background() -> bool:
    """Whether the current request must not wait for the Hub."""
    return _background.get()


class BackgroundLookupMiddleware:
    """Every web request resolves uncached models in the background (never waits)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = _background.set(True)  # as lookups_in_background(), without its generator
        try:
            return self.get_response(request)
        finally:
            _background.reset(token)


def lookup_key(client: HubClient, repo_id: str, revision: str | None) -> str:
    """The cache key of one lookup: a hash of endpoint, token, id and revision."""
    raw = "\n".join((client.endpoint, client.token or "", repo_id.lower(), revision or ""))
    return "modelhub:lookup:" + hashlib.sha256(raw.encode()).hexdigest()[:40]


def remembered_failure(key: str) -> BaseException | None:
    """The failure remembered for ``key`` (a lookup or an outage error), else ``None``."""
    found = fail_open("hub negative cache", None, lambda: cache.get(key + ":failed"))
    return found if isinstance(found, ModelLookupError | HubUnreachableError) else None


def remember_failure(key: str, exc: BaseException) -> None:
    """Remember ``exc`` for ``key``: an outage briefly, a definite answer longer."""
    seconds = (
        settings.HF_OUTAGE_CACHE_SECONDS
        if isinstance(exc, HubUnreachableError)
        else settings.HF_NEGATIVE_CACHE_SECONDS
    )
    fail_open("hub negative cache", None, lambda: cache.set(key + ":failed", exc, seconds))


def take_answer(key: str) -> HubMetadata | None:
    """The metadata a background lookup fetched for ``key``, if any (removed)."""
    # Imported here for start-up speed: huggingface_hub loads only when the Hub is asked.
    from configurator.modelhub.hub import HubMetadata

    with _lock:
        meta = _answers.pop(key, None)
    if meta is None:
        meta = fail_open("hub lookup answers", None, lambda: cache.get(key + ":answer"))
    if isinstance(meta, HubMetadata):
        fail_open("hub lookup answers", None, lambda: cache.delete(key + ":answer"))
        return meta
    return None


def start(key: str, repo_id: str, *, revision: str | None, client: HubClient) -> bool:
    """Start looking ``repo_id`` up in a background thread; False when it already runs
    or every slot is taken (the caller's next poll tries again)."""
    global _slots
    with _lock:
        if key in _in_flight:
            return False
        if _slots is None:
            _slots = threading.BoundedSemaphore(max(1, int(settings.HF_BACKGROUND_LOOKUPS)))
        if not _slots.acquire(blocking=False):
            return False
        _in_flight.add(key)
        slots = _slots
    thread = threading.Thread(
        target=_run,
        args=(key, repo_id, revision, client, slots),
        name=f"hub-background {repo_id}",
        daemon=True,
    )
    thread.start()
    return True


def _run(
    key: str,
    repo_id: str,
    revision: str | None,
    client: HubClient,
    slots: threading.BoundedSemaphore,
) -> None:
    # Imported here for start-up speed: huggingface_hub loads only when the Hub is asked.
    from configurator.modelhub.hub import fetch_with_deadline

    try:
        meta = fetch_with_deadline(repo_id, revision=revision, client=client)
    except (ModelLookupError, HubUnreachableError) as exc:
        remember_failure(key, exc)
    except Exception as exc:  # a bug must not kill the thread silently
        logger.exception("background lookup of %s failed", repo_id)
        failed = HubUnreachableError(
            gettext_noop("the lookup failed (%(error)s)"), {"error": type(exc).__name__}
        )
        remember_failure(key, failed)
    else:
        _keep(key, meta)
    finally:
        with _lock:
            _in_flight.discard(key)
        slots.release()


def _keep(key: str, meta: HubMetadata) -> None:
    with _lock:
        _answers[key] = meta
        while len(_answers) > _ANSWERS_KEPT:
            _answers.popitem(last=False)
    fail_open("hub lookup answers", None, lambda: cache.set(key + ":answer", meta, _ANSWER_SECONDS))


def running(key: str) -> bool:
    """Whether a background lookup for ``key`` runs in this process (for tests/benches)."""
    with _lock:
        return key in _in_flight
