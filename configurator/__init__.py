"""The Django project: settings, URLs, the Celery app and one app per domain concept.

The Celery application lives in :mod:`configurator.celery`: ``celery -A configurator``
finds it there, the web server imports it at start (``configurator.wsgi``), and task
modules declare their tasks on it (``@app.task``, not ``shared_task``, which would bind
to Celery's unconfigured default app in a process that has not imported it). Commands
that enqueue nothing never import Celery.
"""
