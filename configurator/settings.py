"""Settings for the configurator, read from the environment (see ``docs/operations.md``).

With nothing set, the embedded default runs: SQLite in ``db.sqlite3`` and tasks executed
in-process. ``DATABASE_URL`` switches to PostgreSQL, ``CELERY_BROKER_URL`` to a Celery
worker on Redis. ``DJANGO_SECRET_KEY`` is required unless ``DJANGO_DEBUG`` is on.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import dj_database_url
from django.core.management.utils import get_random_secret_key
from django.utils.translation import gettext_lazy as _

from configurator.env import env_bool, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
# django-ninja's templates and static files (its Swagger UI), found without importing it:
# as an installed app it would be imported by every process at start-up.
_NINJA_SPEC = importlib.util.find_spec("ninja")
assert _NINJA_SPEC is not None and _NINJA_SPEC.origin is not None
NINJA_DIR = Path(_NINJA_SPEC.origin).parent

DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = env_str("DJANGO_SECRET_KEY") or ""
# Without a configured key, command-line use (sizing, PDFs, bundles) gets a random key
# for the life of the process; the web server refuses to start on one (configurator.wsgi).
SECRET_KEY_IS_EPHEMERAL = not SECRET_KEY
if not SECRET_KEY:
    SECRET_KEY = get_random_secret_key()

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    # The admin's modules are discovered by the URLconf (configurator.urls), not at
    # start-up: commands that serve no pages do not import every admin module.
    "django.contrib.admin.apps.SimpleAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "template_partials",
    "import_export",
    "configurator.planning",
    "configurator.modelhub",
    "configurator.catalog",
    "configurator.inquiries",
    "configurator.quotes",
    "configurator.verification",
    "configurator.deployments",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "configurator.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates", NINJA_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "configurator.wsgi.application"

DATABASES = {
    "default": dj_database_url.config(
        env="DATABASE_URL",
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=60,
    )
}

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Concurrent writers (a double-clicked button) wait for the lock instead of failing:
    # a busy timeout, and write transactions that take the lock when they begin.
    DATABASES["default"]["OPTIONS"] = {"timeout": 20, "transaction_mode": "IMMEDIATE"}
    DATABASES["default"]["CONN_MAX_AGE"] = 0

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "quotes:queue"
LOGOUT_REDIRECT_URL = "inquiries:configurator"

LANGUAGE_CODE = "de"
LANGUAGES = [("de", _("German")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "configurator" / "locale"]
FORMAT_MODULE_PATH = ["configurator.formats"]  # day-first dates in English too
TIME_ZONE = "Europe/Berlin"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static", NINJA_DIR / "static"]
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT") or BASE_DIR / "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Content-hashed, compressed copies with a year-long cache lifetime.
    "staticfiles": {"BACKEND": "configurator.static_storage.HashedStaticStorage"},
}
# Static files are served by WhiteNoise from STATIC_ROOT (`manage.py collectstatic`);
# in development, and before collectstatic, straight from the apps' folders.
WHITENOISE_USE_FINDERS = DEBUG or not STATIC_ROOT.is_dir()

EMAIL_BACKEND = env_str("DJANGO_EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "configurator@localhost")
PRESALES_EMAIL = env_str("PRESALES_EMAIL", "presales@localhost")

CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # Rendered page fragments that depend only on the code and the language (an unbound
    # form's fields): per process, so a deployment never serves another version's markup.
    "fragments": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "fragments",
    },
}
_REDIS_CACHE_URL = env_str("REDIS_CACHE_URL")
if _REDIS_CACHE_URL:
    CACHES["default"] = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": _REDIS_CACHE_URL,
    }

# Celery: a broker URL means a real worker; without one, tasks run in-process.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or None
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND") or CELERY_BROKER_URL
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 120
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Redis re-delivers a task whose worker died once this many seconds have passed unacked.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(env_str("CELERY_VISIBILITY_TIMEOUT_SECONDS") or "3600")
}

# Quote PDFs are rendered by the worker when a quote changes (configurator.quotes.pdf_cache);
# without a worker the first download renders them.
QUOTE_PDF_PRERENDER = env_bool("QUOTE_PDF_PRERENDER", CELERY_BROKER_URL is not None)

# Hugging Face Hub: the endpoint and token for gated models (see configurator.modelhub).
HF_ENDPOINT = env_str("HF_ENDPOINT", "https://huggingface.co")
HF_TOKEN = env_str("HF_TOKEN") or None
HF_HUB_OFFLINE = env_bool("HF_HUB_OFFLINE", False)
HF_TIMEOUT_SECONDS = 10.0

# Presales: due time is one working day after receipt, in this region's holidays.
HOLIDAY_COUNTRY = env_str("HOLIDAY_COUNTRY", "DE")
HOLIDAY_SUBDIVISION = env_str("HOLIDAY_SUBDIVISION", "BY")
BUSINESS_HOURS = (8, 17)
VAT_RATE = "0.19"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("DJANGO_LOG_LEVEL", "WARNING")},
}
