"""The import job page (``survey.import_jobs``): status, progress, problems or result, followed live. Researchers
only; a dataset import also needs the permission to add datasets."""
from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from survey import import_selectors
from survey.models import ImportJob
from survey.research_views import researcher_required


def _job(request: HttpRequest, pk: int) -> ImportJob:
    try:
        job = import_selectors.import_job_get(pk=pk)
    except ImportJob.DoesNotExist:
        raise Http404(f"No import job {pk}.") from None
    if job.kind == ImportJob.Kind.DATASET and not request.user.has_perm("survey.add_dataset"):
        raise PermissionDenied("A dataset import is for those who may add datasets.")
    return job


@researcher_required
def import_job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    job = _job(request, pk)
    return render(request, "research/import_job.html", {
        "job": job, "uploads": import_selectors.import_job_uploads(job=job),
        "state": import_selectors.import_job_state(job=job)})


@researcher_required
def import_job_json(request: HttpRequest, pk: int) -> JsonResponse:
    return JsonResponse(import_selectors.import_job_state(job=_job(request, pk)))
