"""Settings shared by every environment. Everything that varies comes from the environment."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()

# ---------------------------------------------------------------------------
# Core
# ---------------------------------------------------------------------------
DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env(
    "DJANGO_SECRET_KEY", default="local-development-only-secret-key-change-me-0123456789"
)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
TIME_ZONE = env("TIME_ZONE", default="America/Chicago")
USE_TZ = True
LANGUAGE_CODE = "en-us"
USE_I18N = False
FORMAT_MODULE_PATH = ["config.formats"]  # back-office timestamps name their time zone
ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# ---------------------------------------------------------------------------
# Applications
# ---------------------------------------------------------------------------
DJANGO_APPS = [
    "apps.backoffice.apps.BackOfficeAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
]
THIRD_PARTY_APPS = [
    "rest_framework",
    "rest_framework_simplejwt",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "drf_standardized_errors",
    "simple_history",
    "django_tasks",
    "django_tasks_db",
    "import_export",
    "django_prometheus",
]
LOCAL_APPS = [
    "apps.core",
    "apps.accounts",
    "apps.masterdata",
    "apps.agencies",
    "apps.clients",
    "apps.policies",
    "apps.vehicles",
    "apps.drivers",
    "apps.coverages",
    "apps.certificates",
    "apps.documents",
    "apps.reports",
    "apps.compliance",
    "apps.events",
    "apps.webhooks",
    "apps.demo",
    "apps.backoffice",
]
INSTALLED_APPS = DJANGO_APPS + THIRD_PARTY_APPS + LOCAL_APPS

MIDDLEWARE = [
    # Metrics first and last, so they time the whole stack; the request id before anything
    # that can log or answer. Sessions, the session user and messages are Django's,
    # skipped for a /v1 API call that carries no cookie (apps.core.middleware); the CSP
    # header is django-csp's, built once from the settings (issue 18).
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "apps.core.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "apps.core.middleware.PrecomputedCSPMiddleware",
    "apps.core.middleware.ProblemDetailsMiddleware",
    # A /v1 body is judged before anything reads it (its content coding, its size against its
    # route's limit, whether the operation takes a body), and one sent chunked (no
    # Content-Length) is spooled and given its length (apps.core.request_bodies).
    "apps.core.request_bodies.RequestBodyMiddleware",
    "apps.core.query_params.SingleValuedQueryMiddleware",
    "apps.core.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "apps.core.middleware.AuthenticationMiddleware",
    "apps.core.middleware.MessageMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

if env.bool("QUERY_COUNT_HEADER", default=False):
    MIDDLEWARE.insert(0, "apps.core.middleware.QueryCountMiddleware")

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# ---------------------------------------------------------------------------
# Database: DATABASE_URL, SQLite file by default; PostgreSQL through psycopg 3 and its pool
# ---------------------------------------------------------------------------
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Fail fast (503) rather than hang when the database is unreachable.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env.int("DATABASE_CONNECT_TIMEOUT", default=3)
    )
    if env.bool("DATABASE_POOL", default=False):
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": env.int("DATABASE_POOL_MIN", default=2),
            "max_size": env.int("DATABASE_POOL_MAX", default=10),
        }
    else:
        DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # gunicorn workers and the background worker share the file: WAL lets readers run beside
    # the writer, IMMEDIATE transactions take the write lock up front (no deadlocked upgrade
    # answered "database is locked" at once), and a writer waits up to 20 s for its turn.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": env.int("SQLITE_TIMEOUT", default=20),
        }
    )
# Statements asked on every request with other values (the caller's, verification's) are
# prepared on the PostgreSQL server, planned once per connection (apps.core.postgresql). Off
# (0) behind a pooler in transaction mode that cannot keep prepared statements.
DATABASE_PREPARED_STATEMENTS = env.bool("DATABASE_PREPARED_STATEMENTS", default=True)
# django-prometheus's thin subclasses of the same backends count queries, errors and time, the
# metrics' children bound once per database (apps.core.db_metrics, issue 18); PostgreSQL's also
# checks a persistent connection's health without a round trip.
_INSTRUMENTED = {
    "django.db.backends.postgresql": "apps.core.postgresql",
    "django.db.backends.sqlite3": "apps.core.sqlite3",
}
DATABASES["default"]["ENGINE"] = _INSTRUMENTED.get(
    DATABASES["default"]["ENGINE"], DATABASES["default"]["ENGINE"]
)

# ---------------------------------------------------------------------------
# Background tasks: django-tasks with its database backend (SQLite by default, PostgreSQL with
# SKIP LOCKED across workers); `manage.py worker` runs them beside the webhook relay.
# ---------------------------------------------------------------------------
TASKS = {
    "default": {
        "BACKEND": env("TASKS_BACKEND", default="django_tasks_db.DatabaseBackend"),
        "QUEUES": ["default", "webhooks"],
    }
}
# Webhooks may target private, loopback and link-local addresses only when this is on
# (contract section 14): by default only in development, so `make run` reaches a local receiver.
WEBHOOK_ALLOW_PRIVATE_TARGETS = env.bool("WEBHOOK_ALLOW_PRIVATE_TARGETS", default=DEBUG)
# How long a worker holds a webhook delivery it claimed (seconds): a worker killed mid-attempt
# leaves it to another once this passes. Longer than any attempt (10 s): at least 20.
WEBHOOK_LEASE_SECONDS = env.int("WEBHOOK_LEASE_SECONDS", default=60)
# PostgreSQL: how long a transaction may sit idle between taking its change-feed position and
# its COMMIT (nothing runs there) before the server ends it and gives the feed's lock back
# (apps.events.positions); milliseconds.
EVENTS_POSITION_IDLE_TIMEOUT_MS = env.int("EVENTS_POSITION_IDLE_TIMEOUT_MS", default=5000)
# A worker starting after days on which none ran runs the calendar job of each missed day, at
# most this many days back (policy.effective/expiring/expired and the status changes).
CALENDAR_CATCH_UP_DAYS = env.int("CALENDAR_CATCH_UP_DAYS", default=31)

# ---------------------------------------------------------------------------
# Cache: redis:// in production (shared by every node). By default the database's own table
# (a migration creates it): every process of `make run` shares the login-failure and
# rate-limit counters, which one process's memory would keep apart (contract section 1).
# ---------------------------------------------------------------------------
CACHES = {"default": env.cache("CACHE_URL", default="dbcache://django_cache")}
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
    CACHES["default"]["BACKEND"] = "apps.core.cache.RedisCache"  # one client per pool
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.db.DatabaseCache":
    # Django culls a third of the table past 300 entries: a counter must not vanish early.
    CACHES["default"].setdefault("OPTIONS", {}).setdefault("MAX_ENTRIES", 100_000)
# The caller (API key, user, agencies, permissions version) kept in the shared cache for this
# long, retired at once by every write made through Django (apps.accounts.principal); a change
# made behind Django's back (psql) takes effect within it. 0: read on every request. On by
# default only with Redis (every node); never with a cache in one process's memory.
PRINCIPAL_CACHE_SECONDS = env.int(
    "PRINCIPAL_CACHE_SECONDS",
    default=5 if env("CACHE_URL", default="").startswith("redis") else 0,
)
# Cache exact list counts (invalidated by any write); only with a cache every node shares.
LIST_COUNT_CACHE_SECONDS = env.int(
    "LIST_COUNT_CACHE_SECONDS",
    default=30 if env("CACHE_URL", default="").startswith("redis") else 0,
)

# ---------------------------------------------------------------------------
# Static files and document storage
# ---------------------------------------------------------------------------
STATIC_URL = "/static/"
STATIC_ROOT = env("STATIC_ROOT", default=str(BASE_DIR / "staticfiles"))
MEDIA_ROOT = env("MEDIA_ROOT", default=str(BASE_DIR / "media"))
DOCUMENTS_STORAGE = env("DOCUMENTS_STORAGE", default="filesystem")
DOCUMENT_URL_TTL_SECONDS = env.int("DOCUMENT_URL_TTL_SECONDS", default=900)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
if DOCUMENTS_STORAGE == "s3":
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env("AWS_STORAGE_BUCKET_NAME", default="documents"),
            "endpoint_url": env("AWS_S3_ENDPOINT_URL", default=None),
            "region_name": env("AWS_S3_REGION_NAME", default=None),
            "querystring_expire": DOCUMENT_URL_TTL_SECONDS,
            "file_overwrite": False,
            "default_acl": None,
        },
    }

# ---------------------------------------------------------------------------
# Authentication
# ---------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
API_KEY_REQUIRED = env.bool("API_KEY_REQUIRED", default=True)
# A /v1 body is read (a chunked one spooled) or refused (413, 415) by apps.core.request_bodies
# only for a caller this accepts; any other caller gets its 401 with nothing read.
REQUEST_BODY_GATE = "apps.accounts.authentication.api_key_accepted"
API_KEY_HEADER = "apiKey"
# Failed logins per user name and per client address within the window, before 429.
LOGIN_FAILURES_PER_USER = env.int("LOGIN_FAILURES_PER_USER", default=5)
LOGIN_FAILURES_PER_ADDRESS = env.int("LOGIN_FAILURES_PER_ADDRESS", default=20)
LOGIN_FAILURE_WINDOW_SECONDS = env.int("LOGIN_FAILURE_WINDOW_SECONDS", default=300)
# How many reverse proxies in front of us append to X-Forwarded-For (0: ignore the header).
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)

SIMPLE_JWT = {
    "ACCESS_TOKEN_LIFETIME": timedelta(minutes=env.int("JWT_ACCESS_MINUTES", default=15)),
    "REFRESH_TOKEN_LIFETIME": timedelta(minutes=env.int("JWT_REFRESH_MINUTES", default=1440)),
    "SIGNING_KEY": env("JWT_SIGNING_KEY", default=SECRET_KEY),
    "ALGORITHM": "HS256",
    "AUTH_HEADER_TYPES": ("Bearer",),
    "UPDATE_LAST_LOGIN": False,
}

# ---------------------------------------------------------------------------
# REST framework
# ---------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["apps.accounts.authentication.ApiKeyBearerAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["apps.core.permissions.ModelPermissions"],
    "DEFAULT_RENDERER_CLASSES": ["apps.core.renderers.CamelCaseJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["apps.core.parsers.BoundedCamelCaseJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "apps.core.pagination.PagePagination",
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "apps.core.negotiation.StrictContentNegotiation",
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "apps.core.sorting.SortFilter",
    ],
    "DEFAULT_SCHEMA_CLASS": "apps.core.openapi.ProblemAutoSchema",
    "EXCEPTION_HANDLER": "drf_standardized_errors.handler.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "DATETIME_FORMAT": "%Y-%m-%dT%H:%M:%S.%fZ",
    "DATE_FORMAT": "iso-8601",  # date.isoformat(): four-digit years (apps.core.dates)
    "DATE_INPUT_FORMATS": ["%Y-%m-%d", "%m-%d-%Y"],
    "COERCE_DECIMAL_TO_STRING": True,
    "PAGE_SIZE": 25,
    "DEFAULT_THROTTLE_CLASSES": [
        "apps.accounts.rate_limits.CallerRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "api_key": env("THROTTLE_API_KEY_RATE", default="18000/minute"),
        "user": env("THROTTLE_USER_RATE", default="9000/minute"),
    },
}
JSON_CAMEL_CASE = {"JSON_UNDERSCOREIZE": {"no_underscore_before_number": True}}

ERROR_STATUS_CODES = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "429"]
ERROR_STATUS_CODES += ["500", "503"]
DRF_STANDARDIZED_ERRORS = {
    "EXCEPTION_FORMATTER_CLASS": "apps.core.problems.ProblemFormatter",
    "EXCEPTION_HANDLER_CLASS": "apps.core.problems.ProblemExceptionHandler",
    "ENABLE_IN_DEBUG_FOR_UNHANDLED_EXCEPTIONS": True,
    "ALLOWED_ERROR_STATUS_CODES": ERROR_STATUS_CODES,
    "ERROR_SCHEMAS": {code: "apps.core.problems.ProblemSerializer" for code in ERROR_STATUS_CODES},
}

# ---------------------------------------------------------------------------
# Content-Security-Policy (django-csp) on every page: the admin, Swagger UI, the landing page.
# Scripts only from this origin (Swagger UI runs from the split view's script URL); inline
# styles stay allowed because the admin and Swagger UI set style attributes.
# ---------------------------------------------------------------------------
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Insurance Verification and Fleet Management API",
    "DESCRIPTION": (
        "Real-time verification of trucking insurance, certificates, and fleet records.\n\n"
        "## How to authenticate\n"
        "Every `/v1` call carries two credentials: the **`apiKey` header** and a **Bearer "
        "access token** (the token routes need only the `apiKey`).\n\n"
        "Under `make run` the demo world is seeded (`make demo-reset` restores it): API key "
        "`demo-api-key`; users `demo-admin` (Demo Agency, every permission), `demo-viewer` "
        "(view only) and `other-admin` (Other Agency), all with password `demo-password`.\n\n"
        "On this page:\n"
        "1. Click **Authorize**, type `demo-api-key` under *apiKey*, click *Authorize*, "
        "*Close*.\n"
        "2. Open **POST /v1/auth/token**, *Try it out*, send "
        '`{"username": "demo-admin", "password": "demo-password"}` and copy '
        "the `access` value of the answer.\n"
        "3. Click **Authorize** again, paste it under *bearerAuth* (without the word "
        "`Bearer`), *Authorize*, *Close*. Every *Try it out* now runs as `demo-admin`.\n\n"
        "An access token lives 15 minutes: get a new one with **POST /v1/auth/token/refresh** "
        "and the `refresh` value, or log in again. From a shell: "
        "`curl -X POST -H 'apiKey: demo-api-key' -H 'Content-Type: application/json' "
        '-d \'{"username": "demo-admin", "password": "demo-password"}\' '
        "http://127.0.0.1:8000/v1/auth/token`."
    ),
    "SWAGGER_UI_SETTINGS": {"persistAuthorization": True, "displayRequestDuration": True},
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/v1",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "drf_spectacular.contrib.djangorestframework_camel_case.camelize_serializer_fields",
    ],
    "ENUM_NAME_OVERRIDES": {
        "PolicyStatusEnum": "apps.policies.choices.PolicyStatus",
        "VehicleStatusEnum": "apps.vehicles.choices.VehicleStatus",
        "DriverStatusEnum": "apps.drivers.choices.DriverStatus",
        "VerificationStatusEnum": "apps.coverages.choices.VERIFICATION_STATUSES",
        "VehicleVerificationStatusEnum": "apps.coverages.choices.VEHICLE_VERIFICATION_STATUSES",
    },
}

# ---------------------------------------------------------------------------
# Admin and logging
# ---------------------------------------------------------------------------
LOGIN_URL = "admin:login"
# Fleet files (apps/core/admin_import.py): an import runs every row in one transaction, which on
# SQLite holds every other writer for as long as it lasts, so a file past either limit is
# refused before a row is read. 1,000 rows: the size of the API's verification batch.
IMPORT_MAX_ROWS = env.int("IMPORT_MAX_ROWS", default=1000)
IMPORT_MAX_BYTES = env.int("IMPORT_MAX_BYTES", default=2_000_000)
# An XLSX export replaces each character XLSX cannot hold (the C0 controls but tab, newline and
# carriage return, which the API accepts: an owner "Bell\u0007Co") by U+FFFD, where the whole
# export failed; CSV holds every character and writes them as they are.
IMPORT_EXPORT_ESCAPE_ILLEGAL_CHARS_ON_EXPORT = True
# One JSON object a line (LOG_FORMAT=text for plain lines), each with the request's id.
LOG_FORMAT = env("LOG_FORMAT", default="json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "apps.core.request_id.RequestIdFilter"}},
    "formatters": {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
        "text": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["request_id"],
            "formatter": "text" if LOG_FORMAT == "text" else "json",
        }
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.request": {"level": "ERROR"},
        # Runserver's access lines duplicate the one apps.core.middleware writes.
        "django.server": {"level": "WARNING"},
        # One line per webhook request would repeat the delivery log (webhooks_webhookdelivery)
        # and cost the worker more CPU than the request itself: urllib3 sends deliveries,
        # httpx the scripts under bench/ and reliability/.
        "urllib3": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
    },
}

# ---------------------------------------------------------------------------
# Operations: /metrics (Prometheus) answers a bearer METRICS_TOKEN, or without a token only
# clients on internal addresses (loopback and private networks); the worker's heartbeat counts
# as stale for /readyz after WORKER_HEARTBEAT_MAX_AGE seconds.
# ---------------------------------------------------------------------------
METRICS_TOKEN = env("METRICS_TOKEN", default="")
METRICS_ALLOW_INTERNAL = env.bool("METRICS_ALLOW_INTERNAL", default=True)
WORKER_HEARTBEAT_MAX_AGE = env.int("WORKER_HEARTBEAT_MAX_AGE", default=60)
# Serve /static/ from the apps (no collectstatic) with debug off: `make run` only; nginx
# serves the collected files in production.
SERVE_STATIC = env.bool("SERVE_STATIC", default=False)
# The landing page shows the demo key and users (`make run`, `make dev`); never in production.
DEMO_MODE = env.bool("DEMO_MODE", default=False)
