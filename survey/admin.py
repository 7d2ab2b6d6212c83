"""Curation in the Django admin: search, filters, inlines; ratings and assignments are read-only."""
from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import F, QuerySet
from django.http import HttpRequest

from survey import selectors, services
from survey.models import (
    Assignment,
    Dataset,
    Document,
    Item,
    Participant,
    Questionnaire,
    Rating,
    Reader,
    Study,
    Summary,
    System,
)


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class ReadOnlyAdmin(admin.ModelAdmin):
    """Collected data is never edited by hand; delete is allowed for superusers only."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "source", "created_at"]
    search_fields = ["name", "description"]


class SummaryInline(admin.TabularInline):
    model = Summary
    extra = 0
    fields = ["reader", "system", "text"]
    autocomplete_fields = ["reader", "system"]


class SummariesCompleteFilter(admin.SimpleListFilter):
    """Documents whose summaries a run can use as they are, or those that would stop it (a reader without their own
    summary or one system's)."""

    title = "summaries"
    parameter_name = "summaries"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("incomplete", "incomplete"), ("complete", "complete")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Document]) -> QuerySet[Document]:
        if self.value() == "incomplete":
            return queryset.filter(summary_count__lt=F("summaries_expected"))  # type: ignore[misc]
        if self.value() == "complete":
            return queryset.filter(summary_count__gte=F("summaries_expected"))  # type: ignore[misc]
        return queryset


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "headline", "category", "dataset", "summaries"]
    list_filter = ["dataset", SummariesCompleteFilter, "category"]
    search_fields = ["external_id", "headline", "body"]
    inlines = [SummaryInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Document]:
        return selectors.documents_with_completeness(super().get_queryset(request))

    @admin.display(description="summaries", ordering="summary_count")
    def summaries(self, obj: Document) -> str:
        """"12 of 14 (incomplete)": summaries stored of those a run needs (per reader: own and every system's)."""
        have, need = obj.summary_count, obj.summaries_expected or 0  # type: ignore[attr-defined]
        return f"{have} of {need}" + (" (incomplete)" if have < need else "")


@admin.register(Reader)
class ReaderAdmin(admin.ModelAdmin):
    list_display = ["external_id", "dataset", "history_length"]
    list_filter = ["dataset"]
    search_fields = ["external_id", "profile"]

    @admin.display(description="history")
    def history_length(self, obj: Reader) -> int:
        return len(obj.history or [])


@admin.register(System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "variant"]
    list_filter = ["kind"]
    search_fields = ["name", "variant", "description"]


@admin.register(Summary)
class SummaryAdmin(admin.ModelAdmin):
    list_display = ["document", "reader", "system", "short_text"]
    list_filter = ["system", "document__dataset"]
    search_fields = ["text", "document__external_id", "reader__external_id", "system__name"]
    autocomplete_fields = ["document", "reader", "system"]
    list_select_related = ["document", "reader", "system"]

    @admin.display(description="text")
    def short_text(self, obj: Summary) -> str:
        return obj.text[:90]


@admin.action(description="Generate questionnaires from the design settings")
def generate_questionnaires(modeladmin, request, queryset) -> None:
    for study in queryset:
        try:
            report = services.questionnaires_generate(study=study)
        except services.SurveyError as exc:
            modeladmin.message_user(request, str(exc), messages.ERROR)
        else:
            modeladmin.message_user(
                request, f"{study.slug}: {len(report.questionnaires)} questionnaires, {len(report.skipped)} notes."
            )


@admin.action(description="Open for participants")
def open_studies(modeladmin, request, queryset) -> None:
    for study in queryset:
        try:
            services.study_open(study=study)
        except services.SurveyError as exc:
            modeladmin.message_user(request, str(exc), messages.ERROR)


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["slug", "title", "dataset", "status", "systems_per_questionnaire", "raters_per_questionnaire"]
    list_filter = ["status", "dataset"]
    search_fields = ["slug", "title"]
    filter_horizontal = ["systems"]
    actions = [generate_questionnaires, open_studies]


class ItemInline(ReadOnlyInline):
    model = Item
    fields = ["position", "system", "summary_j", "summary_k"]


@admin.register(Questionnaire)
class QuestionnaireAdmin(ReadOnlyAdmin):
    list_display = ["study", "position", "document", "reader_j", "reader_k", "group"]
    list_filter = ["study"]
    search_fields = ["document__external_id", "reader_j__external_id", "reader_k__external_id"]
    inlines = [ItemInline]


class AssignmentInline(ReadOnlyInline):
    model = Assignment
    fields = ["questionnaire", "slot", "claimed_at", "expires_at", "released_at", "completed_at"]


@admin.register(Participant)
class ParticipantAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "study", "gender", "occupation", "external_source", "consent_at"]
    list_filter = ["study", "gender", "occupation", "external_source"]
    search_fields = ["external_id", "name"]
    exclude = ["token"]
    inlines = [AssignmentInline]


class RatingInline(ReadOnlyInline):
    model = Rating
    fields = ("item", "value", "shown_position", "swapped", "created_at")
    readonly_fields = fields


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "participant", "claimed_at", "expires_at", "released_at", "completed_at"]
    list_filter = ["questionnaire__study", ("completed_at", admin.EmptyFieldListFilter)]
    search_fields = ["public_id", "completion_code", "participant__external_id"]
    exclude = ["presentation"]
    inlines = [RatingInline]


@admin.register(Rating)
class RatingAdmin(ReadOnlyAdmin):
    list_display = ["assignment", "item", "value", "shown_position", "swapped", "created_at"]
    list_filter = ["assignment__questionnaire__study", "value", "item__system"]
    search_fields = ["item__questionnaire__document__external_id", "assignment__participant__external_id"]
    list_select_related = ["assignment", "item__system", "item__questionnaire__study"]


@admin.register(Item)
class ItemAdmin(ReadOnlyAdmin):
    list_display = ["questionnaire", "position", "system"]
    list_filter = ["questionnaire__study", "system"]
    search_fields = ["questionnaire__document__external_id", "system__name"]
    list_select_related = ["questionnaire__study", "questionnaire__document", "system"]
