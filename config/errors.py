"""Error pages and the health check: JSON under /api/ (a client of the API never gets an HTML page), a friendly
page elsewhere (a refused request too: ``refused``, 400 or 413); ``GET /healthz`` reports whether the database (and
the task broker, when one is configured) answers."""
from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

log = logging.getLogger(__name__)

API_PREFIX = "/api/"


def _wants_json(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def _page(template: str, status: int) -> HttpResponse:
    """A static page (no request context: a 500 may come from a lost database, which context processors read)."""
    return HttpResponse(loader.get_template(template).render(), status=status)


def refused(request: HttpRequest, message: str, status: int = 400) -> HttpResponse:
    """A request refused for what it is (its address, its size, its syntax): ``{"detail": message}`` under /api/,
    a page with the message elsewhere."""
    if _wants_json(request):
        return JsonResponse({"detail": message}, status=status)
    return HttpResponse(loader.get_template("400.html").render({"message": message}), status=status)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Django's 400 (a ``SuspiciousOperation`` or ``BadRequest``): a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is a
    413 saying so; anything else a plain 400 (the reason, which may be a security matter, stays in the log)."""
    if isinstance(exception, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return refused(request, f"The request body is larger than this server accepts ({limit} bytes, "
                                f"DATA_UPLOAD_MAX_MEMORY_SIZE).", status=413)
    return refused(request, "The request could not be read.")


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _wants_json(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return _page("404.html", 404)


RESEARCH_PREFIX = "/research/"


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """What is missing and how to fix it: who is signed in, a log-out button (then log in again and come back) and
    a link home; JSON under /api/."""
    if _wants_json(request):
        return JsonResponse({"detail": "You do not have permission to perform this action."}, status=403)
    reason = str(exception) if exception is not None and str(exception) else ""
    return render(
        request,
        "403.html",
        {"for_researchers": request.path.startswith(RESEARCH_PREFIX), "reason": reason, "back_to": request.path},
        status=403,
    )


def server_error(request: HttpRequest) -> HttpResponse:
    if _wants_json(request):
        return JsonResponse({"detail": "Server error: the request could not be completed. Try again later; if it "
                                       "persists, tell the administrator (the error is in the server log)."},
                            status=500)
    return _page("500.html", 500)


def _check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "ok"


def _check_broker() -> str | None:
    """``"ok"`` when the Celery broker answers, ``None`` when none is configured (runs inline)."""
    url = getattr(settings, "CELERY_BROKER_URL", "")
    if not url or getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        return None
    from kombu import Connection

    with Connection(url, connect_timeout=3) as broker:
        broker.ensure_connection(max_retries=1)
    return "ok"


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """``{"status": "ok"|"error", "database": ..., "broker": ...}``; 503 when a part fails (the failing part
    carries the error's class, not its message, which may name hosts or users)."""
    report: dict[str, str | None] = {}
    healthy = True
    for part, check in (("database", _check_database), ("broker", _check_broker)):
        try:
            report[part] = check()
        except Exception as exc:  # any failure is an unhealthy part, reported, never raised
            log.warning("health check failed: %s", part, exc_info=True)
            report[part] = f"error: {type(exc).__name__}"
            healthy = False
    return JsonResponse({"status": "ok" if healthy else "error", **report}, status=200 if healthy else 503)
