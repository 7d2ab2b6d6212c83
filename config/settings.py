"""Settings, all environment-driven: every variable read here is in docs/reference/configuration.md (the security
ones are explained in docs/guide/deploy.md; tests/test_docs_site.py checks that every one is documented).
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def _env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _env_list(name: str, default: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, default).split(",") if part.strip()]


DEBUG = _env_bool("DEBUG")
TESTING = "pytest" in sys.modules or (len(sys.argv) > 1 and sys.argv[1] == "test")

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if DEBUG or TESTING:
        SECRET_KEY = "insecure-development-key-do-not-use-in-production"
    else:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Export SECRET_KEY=<long random string> (or DEBUG=1 for local development)."
        )

ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = _env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "axes",
    "survey",
    "metaeval",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.NulCharacterMiddleware",  # %00 in the path or query string: 400
    # compressed, hashed static files served by the application server itself (no CDN, no separate server)
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # a request body over UPLOAD_MAX_MB: a form error (its files discarded unread), a 413 page, or JSON under /api/
    "config.uploads.UploadLimitMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # last: turns a locked-out login (too many wrong passwords) into a 429 page
    "axes.middleware.AxesMiddleware",
]

# Logins are throttled on every login form (django-axes: the admin's, the researchers', and the API token view,
# which authenticates through the same backend): after AXES_FAILURE_LIMIT wrong passwords for one username from
# one address, that pair is locked out for AXES_COOLOFF_MINUTES (429). The API token view is also rate-limited
# per address (REST_FRAMEWORK's "login" rate).
# With DEBUG off a log-in with one of the demo's published passwords is refused (and counted as a failure).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "survey.demo_passwords.RefusePublishedPasswords",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = float(os.environ.get("AXES_COOLOFF_MINUTES", "15")) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# The client's address for every per-address limit (these lockouts and the API's rates): config/client_address.py.
# X-Forwarded-For counts only behind TRUSTED_PROXY_COUNT proxies (the Nth entry from its right); with none
# (the default) it is ignored, so a client cannot pick a new address for each try.
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT", "0"))
if TRUSTED_PROXY_COUNT < 0:
    raise ImproperlyConfigured(f"TRUSTED_PROXY_COUNT must be 0 or more, not {TRUSTED_PROXY_COUNT}")
AXES_CLIENT_IP_CALLABLE = "config.client_address.client_address"

# The cache holds the API's rate-limit counters (DRF throttles): CACHE_URL=redis://127.0.0.1:6379/1 shares them
# between gunicorn's worker processes and between machines; without it each process counts alone (local memory),
# so N web workers allow N times the rate. (django-axes keeps failed logins in the database: shared either way.)
CACHE_URL = os.environ.get("CACHE_URL", "")


def _caches(url: str) -> dict[str, dict[str, object]]:
    if not url:
        return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    if url.startswith(("redis://", "rediss://", "unix://")):
        return {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url,
                            "KEY_PREFIX": "perseval"}}
    raise ImproperlyConfigured(f"CACHE_URL must be a redis://, rediss:// or unix:// address, not {url!r}")


CACHES = _caches(CACHE_URL)


def _session_engine(cache_url: str) -> str:
    """Sessions live in the database; with a shared cache (CACHE_URL) they are also read through it (cached_db), so
    a participant's page costs no session query. With only per-process memory a session deleted at logout could live
    on in the other web processes' memory, so without CACHE_URL sessions are read from the database alone."""
    return "django.contrib.sessions.backends.cached_db" if cache_url else "django.contrib.sessions.backends.db"


SESSION_ENGINE = _session_engine(CACHE_URL)

ROOT_URLCONF = "config.urls"

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
                "csp.context_processors.nonce",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        # a server process keeps its PostgreSQL connection between requests (a new connection per request costs
        # PostgreSQL a backend process each time); checked before reuse
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE transactions take SQLite's write lock at BEGIN, so concurrent claims serialise
    # instead of failing with "database is locked" on lock upgrade.
    # WAL lets readers go on while one connection writes, and the busy timeout makes a writer wait for the lock
    # (60 s) instead of failing with "database is locked": the embedded default then serves a demo-sized crowd
    # (slowly). PostgreSQL is the production database.
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "transaction_mode": "IMMEDIATE",
        "timeout": 60,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    })
    # A file (not shared-cache memory) test database, so threaded tests see real locking.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / f".test-db-{os.getpid()}.sqlite3")}
elif DATABASES["default"]["ENGINE"].startswith("django.db.backends.postgresql"):
    # The test databases are named after the checkout as well (pytest-xdist adds _gw0, _gw1 ...), so the suites of
    # two checkouts can run at once against one PostgreSQL server without dropping each other's databases.
    DATABASES["default"]["TEST"] = {
        "NAME": f"test_{DATABASES['default']['NAME']}_{hashlib.sha256(str(BASE_DIR).encode()).hexdigest()[:8]}"}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "survey.demo_passwords.PublishedPasswordValidator"},  # with DEBUG off
]
if TESTING:
    # Tests create users and log in thousands of times: PBKDF2's deliberate cost (~0.3 s a hash here) would be a large
    # share of the suite. Django's own default stays in every other setting; no test is about the hasher.
    PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    ]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# plotly.js is vendored in the metaeval app (metaeval/assets.py): static/vendor/plotly-report-<version>.min.js, a
# partial bundle built by scripts/vendor_plotly.sh
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
# debug and tests serve static files from the app folders as they change; production from STATIC_ROOT
WHITENOISE_AUTOREFRESH = DEBUG or TESTING
WHITENOISE_USE_FINDERS = DEBUG or TESTING
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # hashed names and gzip copies after `manage.py collectstatic` (make serve runs it); plain files in debug and
    # tests, where nothing is collected
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage" if DEBUG or TESTING
        else "whitenoise.storage.CompressedManifestStaticFilesStorage",
    },
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Uploads (config/uploads.py): a request body over UPLOAD_MAX_MB is refused with a message (a form error on the
# page, a JSON 413 under /api/). An uploaded file over FILE_UPLOAD_MAX_MEMORY_SIZE goes to a temporary file, not
# memory; the other fields of a request may hold DATA_UPLOAD_MAX_MEMORY_SIZE. An import file over
# IMPORT_INLINE_MAX_BYTES is imported by a Celery job with a progress page (survey/import_jobs.py), a smaller one at
# once.
UPLOAD_MAX_MB = float(os.environ.get("UPLOAD_MAX_MB", "200"))
IMPORT_INLINE_MAX_BYTES = int(os.environ.get("IMPORT_INLINE_MAX_BYTES", str(2 * 1024 * 1024)))
FILE_UPLOAD_MAX_MEMORY_SIZE = 2621440  # 2.5 MB
DATA_UPLOAD_MAX_MEMORY_SIZE = 2621440

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "research:home"
LOGOUT_REDIRECT_URL = "login"

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
if not DEBUG and not TESTING:
    # cookies only over HTTPS (SECURE_COOKIES=0 for a plain-HTTP trial on 127.0.0.1, where secure cookies would
    # never come back and every form would fail its CSRF check)
    SESSION_COOKIE_SECURE = _env_bool("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = _env_bool("SECURE_COOKIES", True)
# HTTPS: behind a reverse proxy that sets X-Forwarded-Proto (SECURE_PROXY_SSL_HEADER=1), redirect plain HTTP
# (SECURE_SSL_REDIRECT=1) and send HSTS for HSTS_SECONDS (0 = off; docs/guide/deploy.md says when to
# turn it on).
if _env_bool("SECURE_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT")
# the load balancer probes /healthz over plain HTTP on the backend: answered there, never redirected
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = int(os.environ.get("HSTS_SECONDS", "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("HSTS_INCLUDE_SUBDOMAINS")
SECURE_HSTS_PRELOAD = _env_bool("HSTS_PRELOAD")
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"

# Content-Security-Policy (django-csp): our own scripts and styles only; the few inline scripts carry the
# request's nonce. Styles allow inline because plotly.js writes <style> elements at run time.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:", "blob:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# HTTP API (/api/): researchers only, by token (``Authorization: Token <key>``) or by a logged-in session
# (which keeps CSRF checks for unsafe methods). JSON only; the browsable API only in debug mode.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["api.permissions.IsResearcher"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        *(["rest_framework.renderers.BrowsableAPIRenderer"] if DEBUG else []),
    ],
    "DEFAULT_PARSER_CLASSES": ["api.parsers.SafeJSONParser"],  # nesting and NUL characters limited: 400
    "DEFAULT_THROTTLE_RATES": {"login": os.environ.get("API_LOGIN_RATE", "10/min")},
    # api.throttling counts per config.client_address; DRF's own rule (any other throttle) agrees with it
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "PerSEval study platform API",
    "DESCRIPTION": (
        "Read-only access to datasets, studies (progress, ratings export) and meta-evaluation runs, and "
        "creation of runs. Researchers only: `Authorization: Token <key>` (POST /api/token/ with username "
        "and password, or `manage.py drf_create_token USER`) or a logged-in session with its CSRF token."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["api.permissions.IsResearcher"],
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "StudyStatusEnum": "survey.models.Study.Status",
        "RunStatusEnum": "metaeval.models.MetaevalRun.Status",
        "RunKindEnum": "metaeval.models.MetaevalRun.Kind",
    },
}

# Structured logs (config/logformat.py): runs queued/claimed/finished, imports, questionnaire claims and
# submissions are INFO events with fields (LOG_LEVEL=INFO to see them).
LOG_FORMAT = os.environ.get("LOG_FORMAT", "json")
if LOG_FORMAT not in ("json", "text"):
    raise ImproperlyConfigured(f"LOG_FORMAT must be json or text, not {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "config.logformat.JsonLinesFormatter"},
        "text": {"format": "%(levelname)s %(name)s %(message)s"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

# Background work on Celery (docs/guide/workers.md). CELERY_BROKER_URL: redis://127.0.0.1:6379/0 in production
# (RabbitMQ's amqp:// works too); `make run` uses a folder on disk (filesystem://) and starts a worker beside the
# dev server. Without a broker (and under tests) tasks run eagerly, inside the request that queues them.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = _env_bool("CELERY_EAGER", TESTING or not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
if CELERY_BROKER_URL.startswith("filesystem://"):
    _QUEUE_DIR = Path(os.environ.get("CELERY_QUEUE_DIR", BASE_DIR / ".celery-queue"))
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "data_folder_in": str(_QUEUE_DIR), "data_folder_out": str(_QUEUE_DIR), "store_processed": False,
    }
else:
    # a message a vanished worker held comes back after this long; the run's lease (below) is what retries it sooner
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600"))}
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "perseval")
CELERY_TASK_ACKS_LATE = True  # a task's message is acknowledged when it ends, so a killed worker's run comes back
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1  # a worker reserves no more runs than it executes
CELERY_WORKER_CONCURRENCY = int(os.environ.get("METAEVAL_WORKER_CONCURRENCY", "2"))  # runs at once per worker
CELERY_WORKER_MAX_MEMORY_PER_CHILD = int(os.environ.get("METAEVAL_WORKER_MAX_MEMORY_MB", "4000")) * 1024  # KiB
CELERY_TASK_IGNORE_RESULT = True  # results live on the run row
CELERY_TIMEZONE = "UTC"
#: a running run's lease: its worker renews it every third of this; past it the run is retried (up to
#: METAEVAL_RUN_ATTEMPTS times in all) or failed with a message, never left running
METAEVAL_RUN_LEASE_SECONDS = float(os.environ.get("METAEVAL_RUN_LEASE_SECONDS", "60"))
METAEVAL_RUN_ATTEMPTS = int(os.environ.get("METAEVAL_RUN_ATTEMPTS", "3"))
#: a run's missing distances of one measure are split into shards of this many text pairs for several workers
#: (metaeval.sharding) once there are at least two shards; 0 turns sharding off
METAEVAL_SHARD_PAIRS = int(os.environ.get("METAEVAL_SHARD_PAIRS", "50000"))
#: helper tasks a sharded run sends per measure (each computes shards until none is left)
METAEVAL_SHARD_HELPERS = int(os.environ.get("METAEVAL_SHARD_HELPERS", "8"))
#: model folders / Hugging Face cache names and BERTScore baseline files that a run requested over the API may name
#: (metaeval.run_policy), comma-separated; the defaults of METAEVAL_INFOLM_MODEL / METAEVAL_BERTSCORE_MODEL always may
METAEVAL_ALLOWED_MODELS = os.environ.get("METAEVAL_ALLOWED_MODELS", "")
METAEVAL_ALLOWED_BASELINES = os.environ.get("METAEVAL_ALLOWED_BASELINES", "")
#: a judge endpoint's API key variable must match this (survey.judge_endpoints.key_env_problem), and never names one
#: of the platform's own settings whatever the pattern says
JUDGE_API_KEY_ENV_PATTERN = os.environ.get("JUDGE_API_KEY_ENV_PATTERN", r"[A-Z][A-Z0-9_]*_API_KEY")
#: every worker reclaims stale runs itself every half lease (metaeval/reclaimer.py), so no beat is needed; this
#: schedule is for operators who run `celery -A config beat` anyway (never a worker with -B: its beat outlives kill -9)
CELERY_BEAT_SCHEDULE = {
    "reclaim-stale-runs": {"task": "metaeval.reclaim_stale_runs", "schedule": max(METAEVAL_RUN_LEASE_SECONDS / 2, 1)},
    "reclaim-stale-judge-runs": {
        "task": "survey.reclaim_stale_judge_runs", "schedule": max(METAEVAL_RUN_LEASE_SECONDS / 2, 1),
    },
    "reclaim-stale-import-jobs": {
        "task": "survey.reclaim_stale_import_jobs", "schedule": max(METAEVAL_RUN_LEASE_SECONDS / 2, 1),
    },
}
