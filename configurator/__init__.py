"""The Django project: settings, URLs, the Celery app and one app per domain concept."""

from configurator.celery import app as celery_app

__all__ = ["celery_app"]
