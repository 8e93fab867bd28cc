"""The Celery application. Without a broker URL, tasks run in-process (eager)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "configurator.settings")

app = Celery("configurator")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
