"""The Django project: settings, URLs, the Celery app and one app per domain concept.

The Celery application lives in :mod:`configurator.celery` and is imported by the task
modules that need it (and found there by ``celery -A configurator``), so commands and
requests that enqueue nothing do not pay for importing Celery.
"""
