"""Stored runs and pairwise judgment sets in the admin: read-only (runs are written by the services only; judgment
sets are imported on the runs pages or by ``manage.py import_judgments``)."""
from __future__ import annotations

from django.contrib import admin

from metaeval.models import JudgmentSet, MetaevalRun
from survey.admin import ReadOnlyAdmin


@admin.register(MetaevalRun)
class MetaevalRunAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "dataset", "study", "status", "step", "created_at", "finished_at", "created_by"]
    list_filter = ["status", "kind", "dataset", "study", "created_at"]
    list_select_related = ["dataset", "study", "created_by"]
    search_fields = ["error", "data_hash"]
    date_hierarchy = "created_at"

    @admin.display(description="progress")
    def step(self, run: MetaevalRun) -> str:
        progress = run.progress or {}
        return f"{progress.get('done', 0)}/{progress.get('total', 0)} {progress.get('step', '')}".strip()


@admin.register(JudgmentSet)
class JudgmentSetAdmin(ReadOnlyAdmin):
    list_display = ["name", "file_name", "judgments", "invalid", "games", "created_at", "created_by"]
    search_fields = ["name", "description", "file_name", "sha256"]
    exclude = ["content"]

    def get_queryset(self, request):  # type: ignore[no-untyped-def]
        return super().get_queryset(request).defer("content")
