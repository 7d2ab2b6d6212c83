"""Researcher pages: studies with progress, ratings download. Login and the researcher role required."""
from __future__ import annotations

import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from metaeval.core.io.fileio import ImporterError
from metaeval.core.judges.prompts import templates_json
from metaeval.core.judges.versus import TABLES as VERSUS_TABLES
from metaeval.core.judges.versus_view import versus_view
from metaeval.core.pairwise.judgments import OVERALL
from survey import exporting, import_jobs, import_selectors, judge_endpoints, judge_runs, selectors, services
from survey.forms import DesignCostForm, JudgeRunForm, JudgmentFileForm
from survey.models import ImportJob, JudgeRun, Study
from survey.selectors.adaptive import design_budget, power_table, study_ranking

RESEARCHER_GROUP = "researcher"
#: the study kinds LLM judges answer (their judges page, cases file and runs)
JUDGED_KINDS = (Study.Kind.PREFERENCE, Study.Kind.SENTENCE_PREFERENCE)


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
        {"study": study, "progress": progress, "participant_url": participant_url,
         "ranking": study_ranking(study)},
    )


@researcher_required
def study_progress_json(request: HttpRequest, slug: str) -> JsonResponse:
    """``selectors.study_progress`` as JSON, for the live study page."""
    study = get_object_or_404(Study, slug=slug)
    progress = selectors.study_progress(study)
    return JsonResponse({"study": study.slug, "status": study.status, **asdict(progress), "percent": progress.percent,
                         "ranking": study_ranking(study)})


def _export_download(study: Study, fmt: str, rows: Iterable[dict[str, object]], columns: Sequence[str],
                     what: str) -> HttpResponse | StreamingHttpResponse:
    """``rows`` as a streamed attachment (``exporting.stream_export``: the CSV header first, then the rows as the
    database gives them), so an export of any size starts at once and holds one batch in memory."""
    if fmt not in exporting.FORMATS:
        return HttpResponse(f"unknown format {fmt!r}", status=400, content_type="text/plain")
    response = StreamingHttpResponse(exporting.stream_export(rows, fmt, columns),
                                     content_type=exporting.CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{what}.{fmt}"'
    return response


@researcher_required
def ratings_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse | StreamingHttpResponse:
    study = get_object_or_404(Study, slug=slug)
    return _export_download(study, fmt, selectors.ratings_export_rows(study=study), selectors.EXPORT_COLUMNS,
                            "ratings")


@researcher_required
def judgments_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse | StreamingHttpResponse:
    """A preference study's judgments as a judgment file (``manage.py export_judgments``); ``?source=human``,
    ``llm`` or ``all`` (default) picks the participants', the judge runs' or both."""
    study = get_object_or_404(Study.objects.exclude(kind=Study.Kind.SIMILARITY), slug=slug)
    source = request.GET.get("source", "all")
    if source not in selectors.JUDGMENT_SOURCES:
        return HttpResponse(f"source must be one of {', '.join(selectors.JUDGMENT_SOURCES)}", status=400,
                            content_type="text/plain")
    what = "judgments" if source == "all" else f"judgments-{source}"
    rows, columns = selectors.study_judgment_file(study=study, source=source)
    return _export_download(study, fmt, rows, columns, what)


@researcher_required
def judge_cases_download(request: HttpRequest, slug: str) -> HttpResponse:
    """The study's items as a cases file for ``python -m metaeval judge`` (JSON Lines)."""
    study = get_object_or_404(Study, slug=slug, kind__in=JUDGED_KINDS)
    lines = [json.dumps(row, ensure_ascii=False) for row in selectors.judge_case_rows(study=study)]
    response = HttpResponse("".join(line + "\n" for line in lines), content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-cases.jsonl"'
    return response


def _judge_run_state(row: selectors.JudgeRunRow) -> dict[str, object]:
    run = row.run
    return {"id": run.pk, "name": run.name, "kind": run.kind, "status": run.status,
            "status_display": run.get_status_display(), "done": row.done, "total": run.total,
            "percent": row.percent, "invalid": row.invalid, "error": run.error,
            "cancel_requested": run.cancel_requested, "cancellable": row.cancellable, "resumable": row.resumable}


@researcher_required
def judge_runs_json(request: HttpRequest, slug: str) -> JsonResponse:
    """The study's judge runs' status and progress, for the judges page's live table."""
    study = get_object_or_404(Study, slug=slug, kind__in=JUDGED_KINDS)
    return JsonResponse({"runs": [_judge_run_state(row) for row in selectors.study_judge_runs(study=study)]})


@researcher_required
@require_http_methods(["GET", "HEAD", "POST"])
def study_judges(request: HttpRequest, slug: str) -> HttpResponse:
    """LLM judges of a preference study: start a run (sent to a worker), import judgments made elsewhere,
    cancel or resume a run, follow progress."""
    study = get_object_or_404(Study, slug=slug, kind__in=JUDGED_KINDS)
    criteria = [criterion["name"] for criterion in study.criteria]
    endpoints = list(judge_endpoints.endpoints_available())
    form = JudgeRunForm(criteria=criteria, endpoints=endpoints)
    upload = JudgmentFileForm()
    action = request.POST.get("action", "") if request.method == "POST" else ""
    if action in ("cancel", "resume"):
        run = get_object_or_404(JudgeRun, pk=request.POST.get("run") or 0, study=study)
        try:
            run = judge_runs.judge_run_cancel(run) if action == "cancel" else judge_runs.judge_run_resume(run)
        except judge_runs.JudgeRunError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Judge run {run.pk} ({run.name}): {run.get_status_display().lower()}"
                             + (", stopping at its next judgment." if run.cancel_requested else "."))
        return redirect("research:study_judges", slug=study.slug)
    if action == "start":
        form = JudgeRunForm(request.POST, criteria=criteria, endpoints=endpoints)
        if form.is_valid():
            endpoint, chosen = form.judge_settings()
            try:
                run = judge_runs.judge_run_create(
                    study=study, endpoint=endpoint, settings=chosen,
                    criteria=form.cleaned_data["criteria"] or criteria, runs=form.cleaned_data["runs"],
                    templates=form.cleaned_data["templates"], user=request.user)
            except judge_runs.JudgeRunError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"Judge run {run.pk} ({run.name}) queued: {run.total} judgments to ask.")
                return redirect("research:study_judges", slug=study.slug)
    if action == "import":
        upload = JudgmentFileForm(request.POST, request.FILES)
        if upload.is_valid() and not import_jobs.runs_inline(upload.cleaned_data["file"]):
            job = import_jobs.import_job_create(kind=ImportJob.Kind.JUDGE_FILE, study=study, user=request.user,
                                                uploads={"file": upload.cleaned_data["file"]})
            return redirect("research:import_job", pk=job.pk)
        if upload.is_valid():
            file = upload.cleaned_data["file"]
            try:
                runs = judge_runs.judge_run_import(study=study, data=file.read(), file_name=file.name,
                                                   user=request.user)
            except (ImporterError, judge_runs.JudgeRunError) as exc:
                upload.add_error("file", str(exc))
            else:
                messages.success(request, judge_runs.judge_import_summary(file.name, runs))
                return redirect("research:study_judges", slug=study.slug)
    return render(request, "research/judges.html", {
        "study": study, "rows": selectors.study_judge_runs(study=study), "form": form, "upload": upload,
        "endpoints": endpoints,
        "import_jobs": import_selectors.study_import_jobs(study=study),
        "import_inline_max": settings.IMPORT_INLINE_MAX_BYTES,
        "items": study.questionnaires.aggregate(n=Count("preference_items"))["n"],
        "default_templates": json.dumps(templates_json(judge_runs.default_templates(study)), indent=2,
                                        ensure_ascii=False),
    }, status=400 if upload.errors else 200)  # a refused upload is a 400, as on the judgment sets page


@researcher_required
@require_http_methods(["GET", "HEAD", "POST"])
def study_design(request: HttpRequest, slug: str) -> HttpResponse:
    """The design preview (what *Generate questionnaires* would create, the ratings it needs, participant time and
    cost) and, on POST, the generation itself."""
    study = get_object_or_404(Study.objects.select_related("dataset"), slug=slug)
    if request.method == "POST" and request.POST.get("action") == "size":
        try:
            services.study_set_cases_per_pair(study=study, value=request.POST.get("cases_per_pair", ""))
        except services.SurveyError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Cases per system pair set to {study.cases_per_pair}; generate the "
                             "questionnaires again to use it.")
        return redirect("research:study_design", slug=study.slug)
    if request.method == "POST":
        try:
            report = services.questionnaires_generate(study=study)
        except services.SurveyError as exc:
            messages.error(request, str(exc))
            return redirect("research:study_design", slug=study.slug)
        messages.success(
            request, f"Generated {len(report.questionnaires)} questionnaires ({len(report.skipped)} notes)."
        )
        return redirect("research:study", slug=study.slug)
    form = DesignCostForm(request.GET or None)
    price = form.cleaned_data.get("price_per_hour") if form.is_valid() else None
    locked = {"generated": study.questionnaires.count(),
              "has_assignments": study.questionnaires.filter(assignments__isnull=False).exists()}
    if study.is_pairwise:
        try:
            if study.kind == Study.Kind.SENTENCE_PREFERENCE:
                topics, skipped = selectors.sentence_plan(study=study)
                planned_items, cases = [len(q.items) for q in topics], len({q.document.pk for q in topics})
            elif study.assignment == Study.AssignmentPolicy.ADAPTIVE:
                # sets are drawn as participants claim: the budget in sets of pairs_per_questionnaire
                found = selectors.preference_cases(study=study)
                n = len(found.systems)
                budget, size = design_budget(study, n * (n - 1) // 2), study.pairs_per_questionnaire
                planned_items = [min(size, budget - start) for start in range(0, budget, size)]
                cases, skipped = len(found.cases), []
                if not cases:
                    raise ValueError("no case: the study's documents have no reader with every system's text")
            else:
                planned, skipped = selectors.preference_plan(study=study)
                planned_items = [len(q.items) for q in planned]
                cases = len({(q.document.pk, q.reader.pk) for q in planned})
        except ValueError as exc:
            return render(request, "research/design.html", {"study": study, "form": form, "problem": str(exc)})
        pairs = sum(planned_items)
        return render(request, "research/design.html", {
            "study": study, "form": form, **locked,
            "preference": {"questionnaires": len(planned_items), "pairs": pairs, "skipped": skipped,
                           "cases": cases,
                           "sets": len(planned_items) * study.raters_per_questionnaire,
                           "answers": pairs * len(study.criteria) * study.raters_per_questionnaire},
            "power": power_table(study) if study.kind == Study.Kind.PREFERENCE else None,
        })
    try:
        plan = selectors.study_design_plan(study=study)
    except ValueError as exc:
        return render(request, "research/design.html", {"study": study, "form": form, "problem": str(exc)})
    estimate = selectors.design_estimate(plan=plan, timing=selectors.median_seconds_per_pair(study=study), price=price)
    return render(
        request,
        "research/design.html",
        {
            "study": study,
            "form": form,
            "plan": plan,
            "estimate": estimate,
            **locked,
        },
    )


@researcher_required
@require_http_methods(["GET", "HEAD", "POST"])
def study_participants(request: HttpRequest, slug: str) -> HttpResponse:
    """Crowd-work review: completion codes, time, quality flags; approve / reject / exclude / include on POST."""
    study = get_object_or_404(Study, slug=slug)
    if request.method == "POST" and request.POST.get("action") == "exclude-below-gold":
        try:
            count = services.participants_exclude_below_gold(study=study)
        except services.SurveyError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"{count} participant{'s' if count != 1 else ''} below the gold threshold "
                                      "excluded from scoring.")
        return redirect("research:study_participants", slug=study.slug)
    if request.method == "POST":
        try:
            ids = [int(value) for value in request.POST.getlist("participant")]
        except ValueError:
            ids = []
        try:
            count, words = services.participants_review(
                study=study, participant_ids=ids, action=request.POST.get("action", ""),
                note=request.POST.get("note", ""),
            )
        except services.SurveyError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"{count} participant{'s' if count != 1 else ''} {words}.")
        return redirect("research:study_participants", slug=study.slug)
    rows = selectors.study_participants(study=study)
    return render(
        request,
        "research/participants.html",
        {"study": study, "rows": rows, "flagged": sum(1 for row in rows if row.flags),
         "excluded": sum(1 for row in rows if row.participant.excluded),
         "with_attention": study.attention_checks > 0 or any(row.attention_total for row in rows), "thresholds": {
             "fast": selectors.FAST_SECONDS_PER_PAIR, "straight": selectors.STRAIGHTLINED_SHARE,
             "spearman": selectors.LOW_AGREEMENT_SPEARMAN, "position": selectors.POSITION_BIAS_SHARE,
             "position_answers": selectors.POSITION_BIAS_MIN_ANSWERS},
         "preference": study.is_pairwise,
         "below_gold": sum(1 for row in rows if row.below_gold)},
    )


@researcher_required
def approvals_download(request: HttpRequest, slug: str) -> HttpResponse:
    """The approvals CSV for the crowd platform (``selectors.APPROVAL_COLUMNS``), spreadsheet-safe."""
    study = get_object_or_404(Study, slug=slug)
    buffer = io.StringIO()
    exporting.write_rows(selectors.approval_rows(study=study), buffer, selectors.APPROVAL_COLUMNS)
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-approvals.csv"'
    return response


@researcher_required
def judges_vs_people(request: HttpRequest, slug: str) -> HttpResponse:
    """Every LLM judge (and prompt version) of a preference study against its people, one criterion at a time
    (``?criterion=``, default ``overall``): ``survey.selectors.versus``."""
    study = get_object_or_404(Study, slug=slug, kind=Study.Kind.PREFERENCE)
    result = selectors.study_versus(study=study)
    criteria = [*result["criteria"], OVERALL] if result["criteria"] else []
    criterion = request.GET.get("criterion", OVERALL)
    if criteria and criterion not in criteria:
        return HttpResponse(f"criterion must be one of {', '.join(criteria)}, not {criterion!r}", status=400,
                            content_type="text/plain")
    return render(request, "research/judges_vs_people.html", {
        "study": study, "result": result, "criteria": criteria, "criterion": criterion,
        "view": versus_view(result, criterion), "tables": VERSUS_TABLES,
    })


@researcher_required
def judges_vs_people_csv(request: HttpRequest, slug: str) -> HttpResponse | StreamingHttpResponse:
    """One table of the judges-vs-people page (``?table=``, default ``agreement``) as CSV, every criterion."""
    study = get_object_or_404(Study, slug=slug, kind=Study.Kind.PREFERENCE)
    table = request.GET.get("table", "agreement")
    if table not in VERSUS_TABLES:
        return HttpResponse(f"table must be one of {', '.join(VERSUS_TABLES)}, not {table!r}", status=400,
                            content_type="text/plain")
    rows = selectors.study_versus(study=study)["tables"].get(table, [])
    columns = list(dict.fromkeys(key for row in rows for key in row))
    return _export_download(study, "csv", rows, columns, f"judges-vs-people-{table}")
