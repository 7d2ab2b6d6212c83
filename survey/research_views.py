"""Researcher pages: studies with progress, ratings download. Login and the researcher role required."""
from __future__ import annotations

import io
from dataclasses import asdict
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render

from survey import exporting, selectors
from survey.models import Study

RESEARCHER_GROUP = "researcher"


def is_researcher(user) -> bool:
    return user.is_active and (user.is_staff or user.groups.filter(name=RESEARCHER_GROUP).exists())


def researcher_required(view):
    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs):
        if not is_researcher(request.user):
            raise PermissionDenied("Researcher access required.")
        return view(request, *args, **kwargs)

    return wrapped


@researcher_required
def home(request: HttpRequest) -> HttpResponse:
    studies = [(s, selectors.study_progress(s)) for s in Study.objects.select_related("dataset")]
    return render(request, "research/home.html", {"studies": studies})


@researcher_required
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug)
    progress = selectors.study_progress(study)
    participant_url = request.build_absolute_uri(f"/s/{study.slug}/")
    return render(
        request,
        "research/study.html",
        {"study": study, "progress": progress, "participant_url": participant_url},
    )


@researcher_required
def study_progress_json(request: HttpRequest, slug: str) -> JsonResponse:
    """``selectors.study_progress`` as JSON, for the live study page."""
    study = get_object_or_404(Study, slug=slug)
    progress = selectors.study_progress(study)
    return JsonResponse({"study": study.slug, "status": study.status, **asdict(progress), "percent": progress.percent})


@researcher_required
def ratings_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug)
    if fmt not in exporting.FORMATS:
        return HttpResponse(f"unknown format {fmt!r}", status=400, content_type="text/plain")
    buffer = io.StringIO()
    exporting.write_ratings(selectors.ratings_export_rows(study=study), buffer, fmt)
    content_type = "text/csv" if fmt == "csv" else "application/x-ndjson"
    response = HttpResponse(buffer.getvalue(), content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-ratings.{fmt}"'
    return response
