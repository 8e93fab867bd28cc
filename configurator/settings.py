"""Settings for the configurator, read from the environment (see ``docs/operations.md``).

With nothing set, the embedded default runs: SQLite in ``db.sqlite3`` and tasks executed
in-process. ``DATABASE_URL`` switches to PostgreSQL, ``CELERY_BROKER_URL`` to a Celery
worker on Redis. ``DJANGO_SECRET_KEY`` is required unless ``DJANGO_DEBUG`` is on.
"""

from __future__ import annotations

import importlib.util
import warnings
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
    "axes",
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
    # django.contrib.messages, with the storage made where a request uses it
    "configurator.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # django-htmx's, with request.htmx tested once per request
    "configurator.middleware.HtmxMiddleware",
    # Web requests never wait for the Hugging Face Hub (configurator.modelhub.background).
    "configurator.modelhub.background.BackgroundLookupMiddleware",
    # Last, as django-axes requires: refuses logins from locked-out clients.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
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

# An empty DATABASE_URL counts as unset (a blank line in an env file), not as a database.
_DATABASE_URL = (env_str("DATABASE_URL") or "").strip() or f"sqlite:///{BASE_DIR / 'db.sqlite3'}"
DATABASES = {"default": dj_database_url.parse(_DATABASE_URL, conn_max_age=60)}

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
if not STATIC_ROOT.is_dir():
    # Served from the apps' folders instead (above): WhiteNoise's start-up warning about
    # the missing STATIC_ROOT says nothing that needs doing.
    warnings.filterwarnings("ignore", message="No directory at: ", category=UserWarning)

EMAIL_BACKEND = env_str("DJANGO_EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "configurator@localhost")
PRESALES_EMAIL = env_str("PRESALES_EMAIL", "presales@localhost")
# SMTP (DJANGO_EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend); mails are sent
# by a Celery task with retries, so a slow or refusing server never holds a request.
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = int(env_str("EMAIL_PORT") or "25")
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = 10

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
    # Django's Redis backend with one client and connection pool per process.
    CACHES["default"] = {
        "BACKEND": "configurator.redis_cache.RedisCache",
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
# Publishing from a web request gives up within a few seconds when the broker is down
# (kombu's default retries hold the request for about 20 s); the caller says so.
CELERY_BROKER_CONNECTION_TIMEOUT = 2.0
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 0.5,
}
# The result store (the same Redis) gives up as quickly instead of 20 reconnects.
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {
    "retry_policy": {
        "max_retries": 1,
        "interval_start": 0,
        "interval_step": 0.5,
        "interval_max": 0.5,
    }
}
# Redis re-delivers a task whose worker died once this many seconds have passed unacked.
# It must exceed the longest task time limit (60 s) plus the longest retry countdown
# (60 s), else a running job is delivered twice; 300 s leaves room for both.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(env_str("CELERY_VISIBILITY_TIMEOUT_SECONDS") or "300"),
    "socket_connect_timeout": 2,
    "socket_timeout": 5,
}

# Quote PDFs are rendered by the worker when a quote changes (configurator.quotes.pdf_cache);
# without a worker the first download renders them.
QUOTE_PDF_PRERENDER = env_bool("QUOTE_PDF_PRERENDER", CELERY_BROKER_URL is not None)

# Hugging Face Hub: the endpoint and token for gated models (see configurator.modelhub).
HF_ENDPOINT = env_str("HF_ENDPOINT", "https://huggingface.co")
HF_TOKEN = env_str("HF_TOKEN") or None
HF_HUB_OFFLINE = env_bool("HF_HUB_OFFLINE", False)
HF_TIMEOUT_SECONDS = 10.0
# Failed lookups are remembered (per endpoint, token and id) so that repeats answer at
# once: a definite answer (not found, gated, unsupported) for 10 minutes, an outage for 1.
HF_NEGATIVE_CACHE_SECONDS = int(env_str("HF_NEGATIVE_CACHE_SECONDS") or "600")
HF_OUTAGE_CACHE_SECONDS = int(env_str("HF_OUTAGE_CACHE_SECONDS") or "60")
# Lookups of uncached models run in the background, at most this many at once per process.
HF_BACKGROUND_LOOKUPS = int(env_str("HF_BACKGROUND_LOOKUPS") or "4")

# Presales: due time is one working day after receipt, in this region's holidays.
HOLIDAY_COUNTRY = env_str("HOLIDAY_COUNTRY", "DE")
HOLIDAY_SUBDIVISION = env_str("HOLIDAY_SUBDIVISION", "BY")
BUSINESS_HOURS = (8, 17)
VAT_RATE = "0.19"

# Clients and rate limits (configurator.clients). Behind a reverse proxy, name the
# proxies' addresses: the client is then the last address in X-Forwarded-For that is not
# one of them. Without it, X-Forwarded-For is ignored (a client could forge it).
TRUSTED_PROXIES = env_list("DJANGO_TRUSTED_PROXIES", [])
RATE_LIMITS = {
    "estimate": env_str("RATE_LIMIT_ESTIMATE") or "120/m",
    "api": env_str("RATE_LIMIT_API") or "60/m",
}
# Quote requests per hour: per e-mail address, per client address (an office behind one
# proxy shares it), and submissions of any kind per client address.
INQUIRY_RATE_LIMITS = {"per_email": 5, "per_address": 50, "attempts_per_address": 100}
RATELIMIT_ENABLE = env_bool("RATE_LIMITS_ENABLED", True)

# Login throttling (django-axes): after 5 failed logins a username is locked for one
# hour from that client address; staff unlock with `manage.py axes_reset`.
AXES_FAILURE_LIMIT = int(env_str("AXES_FAILURE_LIMIT") or "5")
AXES_COOLOFF_TIME = 1  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_CLIENT_IP_CALLABLE = "configurator.clients.client_address_of"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
ADMIN_PATH = (env_str("DJANGO_ADMIN_PATH") or "admin/").strip("/") + "/"

# Production transport security (`manage.py check --deploy`; docs/operations.md).
# DJANGO_HTTPS=true (the site is served over HTTPS) turns on the redirect to HTTPS, HSTS
# and secure cookies; each can be set on its own. Off by default: `make run` and the
# tests speak plain HTTP on loopback.
HTTPS = env_bool("DJANGO_HTTPS", False)
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", HTTPS)
SECURE_HSTS_SECONDS = int(env_str("DJANGO_SECURE_HSTS_SECONDS") or (31_536_000 if HTTPS else 0))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", HTTPS)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
if env_bool("DJANGO_BEHIND_TLS_PROXY", False):
    # The proxy terminates TLS and says so in X-Forwarded-Proto (it must overwrite it).
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# HSTS preload is a commitment to the browsers' list, not a default.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("DJANGO_LOG_LEVEL", "WARNING")},
}
