"""Curation in the Django admin: search, filters, inlines; ratings and assignments are read-only; datasets are
imported from an uploaded file (the importers the management commands use); a study's status changes only through
its actions."""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.files.uploadedfile import UploadedFile
from django.db import models
from django.db.models import F, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from config.uploads import LimitedFileField
from metaeval.core.io.fileio import ImporterError
from survey import import_jobs, selectors, services
from survey.admin_study_form import FIELDSETS, READONLY, StudyAdminForm
from survey.importers import files as import_files
from survey.json_fields import ADMIN_OVERRIDES
from survey.models import (
    Assignment,
    Dataset,
    Document,
    ImportJob,
    ImportUpload,
    Item,
    JudgeEndpoint,
    JudgeJudgment,
    JudgeRun,
    Judgment,
    Participant,
    PreferenceItem,
    Questionnaire,
    Rating,
    Reader,
    Study,
    Summary,
    System,
    TopicSentence,
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


class DatasetImportForm(forms.Form):
    """An uploaded consolidated JSON(L) file, or the two PENS files."""

    CONSOLIDATED, PENS = "consolidated", "pens"
    kind = forms.ChoiceField(
        choices=[(CONSOLIDATED, "Consolidated JSON / JSON Lines"), (PENS, "PENS (news.tsv + personalized_test.tsv)")],
        widget=forms.RadioSelect,
        initial=CONSOLIDATED,
    )
    dataset = forms.CharField(
        required=False,
        max_length=100,
        help_text='Dataset name (letters, digits, "-", "_"). Empty: the file name for a consolidated file, '
        f'"{import_files.PENS_DEFAULT_DATASET}" for PENS. An existing dataset is updated (re-importing changes '
        "nothing).",
    )
    file = LimitedFileField(required=False, label="Consolidated file")
    missing = forms.ChoiceField(
        choices=[("error", "refuse the file (nothing is stored)"), ("drop", "import only what is present")],
        initial="error",
        label="A reader lacking a user or system summary",
    )
    news = LimitedFileField(required=False, label="PENS news.tsv")
    test = LimitedFileField(required=False, label="PENS personalized_test.tsv")

    def clean(self) -> dict:
        data = super().clean() or {}
        needed = ["file"] if data.get("kind") == self.CONSOLIDATED else ["news", "test"]
        for name in needed:
            if not data.get(name):
                self.add_error(name, "Choose a file.")
        return data


def _uploads(form: DatasetImportForm) -> dict[str, UploadedFile]:
    """The form's files by role (``file``, or PENS' ``news`` and ``test``)."""
    roles = import_jobs.DATASET_FORMATS[form.cleaned_data["kind"]]
    return {role: form.cleaned_data[role] for role in roles}


def dataset_import_upload(form: DatasetImportForm) -> str:
    """Run the importer the form asks for on its uploaded files; the import's one-line report, or ImporterError
    (nothing stored)."""
    data = form.cleaned_data
    files = {role: (upload.name or role, upload.chunks()) for role, upload in _uploads(form).items()}
    return import_jobs.dataset_import_files(fmt=data["kind"], files=files, dataset=data["dataset"],
                                            missing=data["missing"])


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "source", "created_at"]
    search_fields = ["name", "description"]
    change_list_template = "admin/survey/dataset/change_list.html"

    def get_urls(self) -> list[URLPattern]:
        extra = [path("import/", self.admin_site.admin_view(self.import_view), name="survey_dataset_import")]
        return extra + super().get_urls()

    def import_view(self, request: HttpRequest) -> HttpResponse:
        """Upload a consolidated or PENS file; the importer's counts or its error (file:line) as a message."""
        if not self.has_add_permission(request):
            from django.core.exceptions import PermissionDenied

            raise PermissionDenied("Importing a dataset needs the permission to add datasets.")
        if request.method == "POST":
            form = DatasetImportForm(request.POST, request.FILES)
            if form.is_valid() and not import_jobs.runs_inline(*_uploads(form).values()):
                data = form.cleaned_data
                job = import_jobs.import_job_create(
                    kind=ImportJob.Kind.DATASET, uploads=_uploads(form), user=request.user,
                    options={"format": data["kind"], "dataset": data["dataset"], "missing": data["missing"]})
                return HttpResponseRedirect(reverse("research:import_job", args=[job.pk]))
            if form.is_valid():
                try:
                    report = dataset_import_upload(form)
                except ImporterError as exc:
                    self.message_user(request, f"Nothing was imported: {exc}", messages.ERROR)
                except (OSError, UnicodeDecodeError) as exc:
                    self.message_user(request, f"Nothing was imported: cannot read the file ({exc})", messages.ERROR)
                else:
                    self.message_user(request, f"Imported {report}", messages.SUCCESS)
                    return HttpResponseRedirect(reverse("admin:survey_dataset_changelist"))
        else:
            form = DatasetImportForm()
        context = {
            **self.admin_site.each_context(request),
            "title": "Import a dataset file",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/survey/dataset/import.html", context)


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
        documents = super().get_queryset(request).select_related("dataset").order_by("dataset", "id")
        return selectors.documents_with_completeness(documents)

    @admin.display(description="summaries", ordering="summary_count")
    def summaries(self, obj: Document) -> str:
        """"12 of 14 (incomplete)": summaries stored of those a run needs (per reader: own and every system's)."""
        have, need = obj.summary_count, obj.summaries_expected or 0  # type: ignore[attr-defined]
        return f"{have} of {need}" + (" (incomplete)" if have < need else "")


@admin.register(Reader)
class ReaderAdmin(admin.ModelAdmin):
    list_display = ["external_id", "dataset", "history_length"]
    list_filter = ["dataset"]
    search_fields = ["external_id", "profile", "dataset__name"]
    list_select_related = ["dataset"]
    formfield_overrides = ADMIN_OVERRIDES  # history: nesting and NUL characters limited

    def get_queryset(self, request: HttpRequest) -> QuerySet[Reader]:
        return super().get_queryset(request).select_related("dataset")  # "U01 [pens]" in widgets

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
    list_select_related = ["document__dataset", "reader__dataset", "system"]

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
                request,
                f"{study.slug}: {len(report.questionnaires)} questionnaires, {len(report.skipped)} notes.",
                messages.SUCCESS,
            )


def _status_action(modeladmin, request, queryset, change, done: str) -> None:
    """Apply ``change(study=...)`` to each selected study: one success or error message per study."""
    for study in queryset:
        try:
            change(study=study)
        except services.SurveyError as exc:
            modeladmin.message_user(request, f"{study.slug}: {exc}", messages.ERROR)
        else:
            modeladmin.message_user(request, f"{study.slug}: {done}", messages.SUCCESS)


@admin.action(description="Open for participants")
def open_studies(modeladmin, request, queryset) -> None:
    _status_action(modeladmin, request, queryset, services.study_open, "open; participants can take part now.")


@admin.action(description="Close (no new questionnaires are handed out)")
def close_studies(modeladmin, request, queryset) -> None:
    _status_action(
        modeladmin, request, queryset, services.study_close,
        "closed; no new questionnaires are handed out (sets already started can still be submitted).",
    )


@admin.action(description="Reopen as draft (to change the design)")
def draft_studies(modeladmin, request, queryset) -> None:
    _status_action(modeladmin, request, queryset, services.study_reopen_draft, "back to draft.")


@admin.action(description="Apply the iCOPERNICUS survey preset (3 readers, 9 systems, 1 rater, shuffled)")
def icopernicus_preset(modeladmin, request, queryset) -> None:
    _status_action(modeladmin, request, queryset, services.study_apply_icopernicus_preset,
                   "iCOPERNICUS design set (3 sampled readers per document, the readers' pair and 9 systems' pairs "
                   "per questionnaire, 1 rater); generate its questionnaires next.")


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["slug", "title", "kind", "dataset", "status", "systems_per_questionnaire",
                    "raters_per_questionnaire", "created_by"]
    list_filter = ["kind", "status", "dataset"]
    search_fields = ["slug", "title"]
    filter_horizontal = ["systems"]
    readonly_fields = READONLY
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    actions = [generate_questionnaires, icopernicus_preset, open_studies, close_studies, draft_studies]
    # fieldsets per kind, scale labels and criteria as rows, systems of the dataset (the reference ``user`` never:
    # its pair is in every questionnaire anyway); see survey/admin_study_form.py
    form = StudyAdminForm
    fieldsets = FIELDSETS

    class Media:
        js = ["survey/admin_study.js"]
        css = {"all": ["survey/admin_study.css"]}

    def save_model(self, request: HttpRequest, obj: Study, form, change: bool) -> None:
        if not change:
            obj.created_by = request.user  # type: ignore[assignment]
        super().save_model(request, obj, form, change)


class ItemInline(ReadOnlyInline):
    model = Item
    fields = ["position", "system", "summary_j", "summary_k"]


class PreferenceItemInline(ReadOnlyInline):
    model = PreferenceItem
    fields = ["position", "system_a", "system_b", "summary_a", "summary_b", "sentence_a", "sentence_b"]


@admin.register(Questionnaire)
class QuestionnaireAdmin(ReadOnlyAdmin):
    list_display = ["study", "position", "document", "reader_j", "reader_k", "group"]
    list_filter = ["study"]
    list_select_related = ["study", "document__dataset", "reader_j__dataset", "reader_k__dataset"]
    search_fields = ["document__external_id", "reader_j__external_id", "reader_k__external_id"]
    inlines = [ItemInline, PreferenceItemInline]


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


@admin.register(PreferenceItem)
class PreferenceItemAdmin(ReadOnlyAdmin):
    list_display = ["questionnaire", "position", "system_a", "system_b"]
    list_filter = ["questionnaire__study"]
    search_fields = ["questionnaire__document__external_id", "system_a__name", "system_b__name"]
    list_select_related = ["questionnaire__study", "questionnaire__document", "system_a", "system_b"]


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ["assignment", "item", "criterion", "winner", "shown_first", "shown_position", "created_at"]
    list_filter = ["assignment__questionnaire__study", "criterion", "winner", "shown_first"]
    search_fields = ["item__questionnaire__document__external_id", "assignment__participant__external_id"]
    list_select_related = ["assignment", "item__system_a", "item__system_b", "item__questionnaire__study"]


@admin.register(JudgeRun)
class JudgeRunAdmin(ReadOnlyAdmin):
    """Judge runs are started, cancelled and resumed on the study's LLM judges page (or the API); here they are
    looked at (and deleted with their judgments)."""

    list_display = ["id", "study", "name", "kind", "status", "done", "total", "runs", "created_at"]
    list_filter = ["study", "kind", "status"]
    search_fields = ["name", "study__slug"]
    list_select_related = ["study"]


@admin.register(JudgeJudgment)
class JudgeJudgmentAdmin(ReadOnlyAdmin):
    list_display = ["judge_run", "item", "criterion", "run", "winner", "shown_first", "seconds"]
    list_filter = ["judge_run__study", "judge_run", "criterion", "winner"]
    search_fields = ["raw", "error", "item__questionnaire__document__external_id"]
    list_select_related = ["judge_run__study", "item__system_a", "item__system_b", "item__questionnaire__study"]


class ImportUploadInline(ReadOnlyInline):
    model = ImportUpload
    fields = ["role", "name", "size"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[ImportUpload]:
        return super().get_queryset(request).defer("content")


@admin.register(ImportJob)
class ImportJobAdmin(ReadOnlyAdmin):
    """Large imports run by a worker (their page: /research/imports/<id>/); looked at here, not changed."""

    list_display = ["id", "kind", "status", "study", "done", "total", "attempts", "created_by", "created_at"]
    list_filter = ["kind", "status"]
    list_select_related = ["study", "created_by"]
    exclude = ["options"]
    inlines = [ImportUploadInline]


@admin.register(ImportUpload)
class ImportUploadAdmin(ReadOnlyAdmin):
    list_display = ["job", "role", "name", "size"]
    fields = ["job", "role", "name", "size"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[ImportUpload]:
        return super().get_queryset(request).defer("content")


@admin.register(TopicSentence)
class TopicSentenceAdmin(admin.ModelAdmin):
    """A topic's source sentences (imported with ``manage.py import_topics``); the text may be corrected here. A
    sentence in a generated questionnaire cannot be deleted."""

    list_display = ["document", "position", "text"]
    list_filter = ["document__dataset"]
    search_fields = ["text", "document__external_id"]
    list_select_related = ["document"]
    readonly_fields = ["document", "position"]


@admin.register(JudgeEndpoint)
class JudgeEndpointAdmin(admin.ModelAdmin):
    """The judges researchers may run (``survey.judge_endpoints``): only staff with this model's permissions (the
    operator) add or change them; researchers choose one by name on a study's LLM judges page or in the API."""

    list_display = ["name", "kind", "enabled", "base_url", "api_key_env", "allow_private", "model_path", "updated_at"]
    list_filter = ["kind", "enabled", "allow_private"]
    search_fields = ["name", "description", "base_url", "model_choices", "model_path"]
    fieldsets = [
        (None, {"fields": ["name", "kind", "description", "enabled"]}),
        ("OpenAI-compatible endpoint", {"fields": ["base_url", "model_choices", "api_key_env", "allow_private",
                                                   "max_concurrency"]}),
        ("Local model (transformers)", {"fields": ["model_path", "device"]}),
    ]
