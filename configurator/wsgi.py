"""WSGI entry point. Refuses to serve without a configured secret key."""

import os

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "configurator.settings")
application = get_wsgi_application()
# Web processes enqueue tasks: the project's Celery app is the current app from the start
# (commands import it only when they enqueue, see configurator/__init__.py).
import configurator.celery  # noqa: E402, F401

if settings.SECRET_KEY_IS_EPHEMERAL and not settings.DEBUG:
    raise ImproperlyConfigured("set DJANGO_SECRET_KEY (or DJANGO_SECRET_KEY_FILE) before serving")
