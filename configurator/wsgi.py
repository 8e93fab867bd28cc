"""WSGI entry point. Refuses to serve without a configured secret key.

Once the application and its URLconf are loaded, everything loaded so far is frozen out
of the garbage collector (:func:`gc.freeze`): it lives as long as the process, and a
full collection, which a long-running worker makes every few hundred requests as its
caches turn over, no longer walks it (about 100,000 objects; ``docs/benchmarks.md``).
"""

import gc
import os

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "configurator.settings")
application = get_wsgi_application()
# Web processes enqueue tasks: the project's Celery app is the current app from the start
# (commands import it only when they enqueue, see configurator/__init__.py).
import configurator.celery  # noqa: E402, F401

if settings.SECRET_KEY_IS_EPHEMERAL and not settings.DEBUG:
    raise ImproperlyConfigured("set DJANGO_SECRET_KEY (or DJANGO_SECRET_KEY_FILE) before serving")

get_resolver().resolve("/")  # loads the URLconf and the views it imports before the freeze
gc.collect()  # start-up's garbage is freed, not frozen with the rest
gc.freeze()
