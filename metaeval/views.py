"""Researcher pages for scoring runs (/research/runs/): list and start runs, follow one, download its results.

Login and the researcher role (or staff) required, as for the study pages. A POST only queues the run and starts a
worker for it (``metaeval.services.run_launch``); the run page polls ``status.json`` until it is finished.
"""
from __future__ import annotations

import io
import json
import math
import re
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.cache import get_conditional_response, patch_vary_headers
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_http_methods, require_safe

from config.uploads import LimitedFileField
from metaeval import selectors, services
from metaeval.assets import PLOTLY_JS
from metaeval.cli.scoring import REPORT_BETA
from metaeval.core import display
from metaeval.core.io.fileio import ImporterError
from metaeval.core.io.records import table_columns, write_csv
from metaeval.core.measures.registry import LEXICAL, MEASURES, NEURAL
from metaeval.core.options import SEED_MAX, Option
from metaeval.core.perseval.measure import PARAMETERS
from metaeval.core.perseval.pipeline import COLUMNS, DEFAULT_AUX, RunOptions
from metaeval.core.perseval.report import REPORT_OPTIONS
from metaeval.models import JudgmentSet, MetaevalRun
from metaeval.option_fields import form_field
from survey import import_jobs
from survey.models import Dataset, ImportJob, Study
from survey.research_views import researcher_required

FLOAT_COLUMNS = ("egises", "degress", "perseval", "accuracy", "p_acc", "egises_accuracy")


def _measure_choices() -> list[tuple[str, str]]:
    return [(name, f"{name} (neural)" if name in NEURAL else name) for name in MEASURES]


def _names(text: str | None) -> list[str]:
    """The names in a text input, separated by commas, semicolons or spaces."""
    return [part for part in re.split(r"[\s,;]+", (text or "").strip()) if part]


def _parameter_field(option: Option) -> forms.Field:
    """A PerSEval parameter's form field: a checkbox for a yes/no one, else a checked text input (empty: default)."""
    if option.kind is bool:
        return forms.BooleanField(required=False, initial=option.default, label=option.name.replace("_", " "),
                                  help_text=option.describe())
    if option.name == "beta":  # the form proposes the paper's optimum, as the report does
        return form_field(option, required=False, initial=REPORT_BETA, default=REPORT_BETA, label="beta")
    return form_field(option, required=False, initial=option.default, label=option.name.replace("_", " "))


#: the form's sections, in page order: (title, what it decides, field names); the page renders them in this order
RUN_FORM_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Data", "What is scored.", ("dataset", "study", "systems", "missing", "preprocess", "exclude_raters")),
    ("Measures", "Distances between summaries, and those the HJ variants are compared with.",
     ("measures", "aux", "compat")),
    ("PerSEval parameters", "Exponents and weights of the measures (docs/conventions.md); empty: the default shown.",
     tuple(option.name for option in PARAMETERS)),
    ("Report", "A full report adds bootstrap intervals, permutation tests, the beta ablation, rank stability, "
     "Borda-Kendall consensus and rater agreement to the score table; the settings below apply to it.",
     ("full_report", "seed", "judgment_set", *(option.name for option in REPORT_OPTIONS))),
)


class RunForm(forms.Form):
    """What a researcher may choose for a run: every option of the API's run request (``RunCreateSerializer``)
    except the neural measures' own options; :meth:`run_options` turns it into :class:`RunOptions`."""

    dataset = forms.ModelChoiceField(queryset=Dataset.objects.order_by("name"), to_field_name="name", empty_label=None)
    study = forms.ModelChoiceField(
        queryset=Study.objects.select_related("dataset").order_by("slug"),
        required=False,
        to_field_name="slug",
        empty_label="none (automatic measures only)",
        help_text="Its ratings give the human-judgment (HJ) variants; it must rate the chosen dataset.",
    )
    systems = forms.CharField(
        required=False, label="Systems",
        help_text="Comma-separated system names to score; empty: every system of the dataset.",
    )
    missing = forms.ChoiceField(
        choices=[("error", "stop the run and name the document"),
                 ("drop", "leave such readers out (for that system)")],
        initial="error", required=False, label="A reader without a summary from a system",
        help_text="Readers need their own summary and each system's; an incomplete document otherwise stops the run.",
    )
    preprocess = forms.ChoiceField(
        choices=[("none", "none (texts as stored)"), ("authors", "the authors' (lower-case, lemmas, stop words)")],
        initial="none", required=False, label="Text preprocessing",
    )
    exclude_raters = forms.CharField(
        required=False,
        label="Exclude raters",
        help_text="Comma-separated rater ids as in the ratings export (P12, P15); needs a study.",
    )
    measures = forms.MultipleChoiceField(
        choices=_measure_choices, initial=list(LEXICAL), required=False, widget=forms.CheckboxSelectMultiple
    )
    aux = forms.MultipleChoiceField(
        label="Aux measures (HJ)",
        choices=_measure_choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Need a study; with a study and none checked, ROUGE-L.",
    )
    compat = forms.BooleanField(
        required=False, label="The authors' compatibility mode",
        help_text="Reproduces the authors' code where it differs from the paper (docs/conventions.md).",
    )
    full_report = forms.BooleanField(required=False, initial=True, label="Full report")
    seed = forms.IntegerField(
        required=False, min_value=0, max_value=SEED_MAX,
        help_text="Seed of every random draw of the report; empty: a fresh one, stored with the run.",
    )

    judgment_set = forms.ModelChoiceField(
        queryset=JudgmentSet.objects.defer("content").order_by("name"),
        required=False,
        to_field_name="name",
        empty_label="none",
        label="Pairwise judgments",
        help_text="A judgment set (upload one on the Pairwise judgments page) adds its section to the report: Elo "
        "and Bradley-Terry with intervals, win/tie/loss, win fractions, consistency curves.",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for option in PARAMETERS:
            self.fields[option.name] = _parameter_field(option)
        for option in REPORT_OPTIONS:
            self.fields[option.name] = form_field(
                option, required=False, initial=option.default, label=option.name.replace("_", " ")
            )
        study_field = self.fields["study"]
        assert isinstance(study_field, forms.ModelChoiceField)
        study_field.label_from_instance = lambda s: f"{s.slug} ({s.dataset.name})"  # type: ignore[assignment]

    def groups(self) -> list[dict[str, Any]]:
        """The bound fields by section, for the page (``RUN_FORM_GROUPS``)."""
        return [{"title": title, "help": text, "fields": [self[name] for name in names]}
                for title, text, names in RUN_FORM_GROUPS]

    def clean_exclude_raters(self) -> list[str]:
        ids, bad = selectors.parse_rater_ids(_names(self.cleaned_data.get("exclude_raters")))
        if bad:
            raise forms.ValidationError(f"not a rater id: {', '.join(bad)} (write P12 or 12)")
        return ids

    def clean_systems(self) -> list[str]:
        return _names(self.cleaned_data.get("systems"))

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        errors = selectors.run_request_errors(
            dataset=data.get("dataset"), study=data.get("study"), aux=data.get("aux") or [],
            exclude_raters=data.get("exclude_raters") or [], systems=data.get("systems") or [],
        )
        for field, message in errors.items():
            self.add_error(field, message)
        if not data.get("measures") and not data.get("aux") and "measures" not in self.errors:
            self.add_error("measures", "Choose at least one measure.")
        if data.get("judgment_set") is not None and not data.get("full_report"):
            self.add_error("judgment_set", "Pairwise judgments go with a full report: tick Full report.")
        return data

    def run_options(self) -> RunOptions:
        data = self.cleaned_data
        aux = list(data["aux"]) or (list(DEFAULT_AUX) if data["study"] is not None else [])
        parameters: dict[str, Any] = {
            option.name: data[option.name] for option in PARAMETERS if data.get(option.name) is not None
        }
        return RunOptions.from_dict({
            "measures": list(data["measures"]),
            **parameters,
            "compat": "authors" if data["compat"] else None,
            "missing": data["missing"] or "error",
            "aux": aux,
            "systems": data["systems"] or None,
            "preprocess": data["preprocess"] or "none",
            # a measure whose model is missing is listed with the reason, the rest still runs
            "skip_unavailable": True,
        })

    def report_settings(self) -> dict[str, Any] | None:
        """The report's settings that were given (the rest take the table's defaults), or ``None`` for scores only."""
        data = self.cleaned_data
        if not data.get("full_report"):
            return None
        return {option.name: data[option.name] for option in REPORT_OPTIONS
                if data.get(option.name) not in (None, "")}


@researcher_required
@require_http_methods(["GET", "HEAD", "POST"])
def run_list(request: HttpRequest) -> HttpResponse:
    """The runs, newest first, and the form that starts one (POST: queue, launch, go to its page)."""
    if request.method == "POST":
        form = RunForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            run = services.run_enqueue(
                dataset=data["dataset"], study=data["study"], options=form.run_options(), user=request.user,
                exclude_raters=data["exclude_raters"], seed=data.get("seed"),
                kind=MetaevalRun.Kind.REPORT if data.get("full_report") else MetaevalRun.Kind.SCORES,
                report=form.report_settings(), judgment_set=data.get("judgment_set"),
            )
            services.run_launch(run)
            messages.success(request, f"Run {run.pk} started.")
            return redirect("runs:detail", pk=run.pk)
    else:
        # a run page's "start again" links fill in what the failed run lacked (e.g. missing=drop)
        initial = {key: request.GET[key] for key in ("dataset", "study", "missing") if request.GET.get(key)}
        form = RunForm(initial=initial)
    runs = selectors.run_list()[:200]
    studies = form.fields["study"].queryset  # type: ignore[attr-defined]
    context = {"form": form, "runs": runs, "studies": studies}
    return render(request, "research/runs.html", context, status=400 if form.errors else 200)


@researcher_required
@require_safe
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(selectors.run_list(), pk=pk)
    return render(
        request,
        "research/run.html",
        {
            "run": run,
            "state": selectors.run_progress(run),
            "rows": _display_rows(run.scores),
            "parameters": json.dumps(run.parameters, indent=2, sort_keys=True),
            "live": run.is_live,
            "fix_url": _fix_url(run),
        },
    )


class JudgmentSetForm(forms.Form):
    """Upload a pairwise judgment file (:func:`metaeval.services.judgment_set_import`)."""

    name = forms.SlugField(max_length=100, help_text="Letters, digits, - and _; how the run form names the set.")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    file = LimitedFileField(
        label="Judgment file",
        help_text="CSV with a header, or JSON Lines (.jsonl): case_id,criterion,model_a,model_b,winner and optionally "
        "judge,judge_kind,run,shown_first,doc_id,reader_id; winner is model_a, model_b, tie or invalid.",
    )


class StudyJudgmentSetForm(forms.Form):
    """Store a preference study's judgments as a judgment set."""

    set_name = forms.SlugField(max_length=100, label="Name", help_text="Letters, digits, - and _.")
    study = forms.ModelChoiceField(
        queryset=Study.objects.filter(kind=Study.Kind.PREFERENCE).order_by("slug"), to_field_name="slug",
        empty_label=None, label="Preference study",
        help_text="Its submitted judgments so far; participants excluded on its participants page are left out.",
    )
    source = forms.ChoiceField(
        choices=[("human", "Participants"), ("llm", "LLM judges"), ("all", "Participants and LLM judges")],
        initial="human", required=False, label="Judgments of",
        help_text="LLM judges: every stored judgment of the study's judge runs (judge_kind llm).",
    )


@researcher_required
@require_http_methods(["GET", "HEAD", "POST"])
def judgment_set_list(request: HttpRequest) -> HttpResponse:
    """The stored judgment sets, the upload form (POST: import all or nothing; every problem is listed) and the
    form that stores a preference study's judgments (POST with ``set_name``)."""
    from_study = "set_name" in request.POST
    form = JudgmentSetForm(None if from_study else (request.POST or None), request.FILES or None)
    study_form = StudyJudgmentSetForm(request.POST if from_study else None,
                                      initial={"study": request.GET.get("study")})
    problems: list[str] = []
    if from_study and study_form.is_valid():
        try:
            stored = services.judgment_set_from_study(
                name=study_form.cleaned_data["set_name"], study=study_form.cleaned_data["study"], user=request.user,
                source=study_form.cleaned_data["source"] or "human",
            )
        except ValueError as exc:
            study_form.add_error("set_name" if str(exc).startswith("name ") else "study", str(exc))
        else:
            messages.success(request, f"Judgment set {stored.name} stored: {stored.judgments} judgments, "
                                      f"{stored.games} games.")
            return redirect("runs:judgments")
    if request.method == "POST" and not from_study and form.is_valid() and not import_jobs.runs_inline(
            form.cleaned_data["file"]):
        try:  # a large file: checked for its name now, imported by a worker
            name = services.judgment_set_name_check(form.cleaned_data["name"])
        except ValueError as exc:
            form.add_error("name", str(exc))
        else:
            job = import_jobs.import_job_create(
                kind=ImportJob.Kind.JUDGMENT_SET, uploads={"file": form.cleaned_data["file"]}, user=request.user,
                options={"name": name, "description": form.cleaned_data["description"]})
            return redirect("research:import_job", pk=job.pk)
    if request.method == "POST" and not from_study and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            stored = services.judgment_set_import(
                name=form.cleaned_data["name"], data=upload.read(), file_name=upload.name,
                description=form.cleaned_data["description"], user=request.user,
            )
        except ImporterError as exc:
            problems = str(exc).splitlines()
        except ValueError as exc:  # a taken name, or a file without any valid judgment
            form.add_error("name" if str(exc).startswith("name ") else "file", str(exc))
        else:
            messages.success(request, services.judgment_set_summary(stored))
            return redirect("runs:judgments")
    failed = bool(form.errors or problems or study_form.errors)
    return render(request, "research/judgments.html",
                  {"form": form, "study_form": study_form, "problems": problems, "sets": selectors.judgment_sets()},
                  status=400 if failed else 200)


def _fix_url(run: MetaevalRun) -> str | None:
    """For a run stopped by an incomplete document: the run form, filled in to leave such readers out."""
    if run.status != MetaevalRun.Status.FAILED or not run.error.startswith(services.INCOMPLETE_DATA):
        return None
    fields = {"dataset": run.dataset.name, "missing": "drop"} | ({"study": run.study.slug} if run.study else {})
    query = urlencode(fields)
    return f"{reverse('runs:list')}?{query}#start"


@researcher_required
@require_safe
def run_status(request: HttpRequest, pk: int) -> JsonResponse:
    run = get_object_or_404(MetaevalRun, pk=pk)
    return JsonResponse(selectors.run_progress(run))


@researcher_required
@require_safe
def run_scores_csv(request: HttpRequest, pk: int) -> HttpResponse:
    """The score table as ``python -m metaeval score`` writes it (stored nulls of score columns back to nan)."""
    run = get_object_or_404(MetaevalRun, pk=pk)
    rows = [
        {key: (math.nan if value is None and key in FLOAT_COLUMNS else value) for key, value in row.items()}
        for row in run.scores
    ]
    buffer = io.StringIO()
    write_csv(rows, COLUMNS, buffer)
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-scores.csv"'
    return response


@researcher_required
@require_safe
def run_json(request: HttpRequest, pk: int) -> JsonResponse:
    run = get_object_or_404(selectors.run_list(), pk=pk)
    response = JsonResponse(selectors.run_record(run), json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}.json"'
    return response


def _display_rows(scores: list[dict]) -> list[dict]:
    """Score rows for the page, numbers as the report shows them (:func:`metaeval.core.display.fmt_number`: 4
    decimals, ``< 0.0001`` for a tiny value, ``–`` for a missing one)."""
    def cell(key: str, value: object) -> object:
        if key in FLOAT_COLUMNS or isinstance(value, int | float):
            return display.fmt_number(value)
        return "" if value is None else value

    return [{key: cell(key, row.get(key)) for key in COLUMNS} for row in scores]


# -- the full report (kind="report") ----------------------------------------------------------------------------


def _report_run(pk: int) -> MetaevalRun:
    run = get_object_or_404(selectors.run_list(), pk=pk)
    if run.kind != MetaevalRun.Kind.REPORT or run.status != MetaevalRun.Status.DONE or not run.report:
        raise Http404("This run has no finished report.")
    return run


def _report_table(pk: int, name: str) -> tuple[MetaevalRun, list[dict]]:
    run = _report_run(pk)
    rows = run.report.get("tables", {}).get(name)
    if rows is None:
        raise Http404(f"no table {name!r} in this report")
    return run, rows


def _report_context(run: MetaevalRun, *, standalone: bool) -> dict[str, object]:
    """The report page's context (:func:`metaeval.report_page.report_context`, shared with the offline HTML)."""
    from metaeval.report_page import report_context

    return report_context(run.report, run, standalone=standalone)


@researcher_required
@require_safe
def run_report(request: HttpRequest, pk: int) -> HttpResponse:
    """Interactive figures (plotly.js from static/) and every table, with downloads. A ``Link`` header preloads
    plotly.js (what every figure waits for): the browser requests it with the page's headers, before it has decoded the
    page's body (the figures' data) to find the ``<script>`` in its head."""
    run = _report_run(pk)
    response = render(request, "research/report.html", _report_context(run, standalone=False))
    response["Link"] = f"<{static(PLOTLY_JS)}>; rel=preload; as=script"
    return response


@researcher_required
@require_safe
@gzip_page
def run_report_tables(request: HttpRequest, pk: int) -> HttpResponse:
    """The report page's tables as an HTML fragment, which the page's script fetches once its figures are drawn
    (:func:`metaeval.report_page.report_tables`: cached per run). Revalidated on every use (``no-cache``: a researcher
    who lost the role gets no copy from the browser's cache), a 304 while the run's ETag holds."""
    from metaeval.report_page import report_tables

    run = _report_run(pk)
    html, etag = report_tables(run.report, run)
    response = get_conditional_response(request, etag=etag) or HttpResponse(html)
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"
    patch_vary_headers(response, ["Cookie"])
    return response


@researcher_required
@require_safe
def run_report_html(request: HttpRequest, pk: int) -> HttpResponse:
    """The same report as one self-contained HTML file: plotly.js, the drawing script and the data inlined."""
    from metaeval.report_page import standalone_html  # one definition with the notebook API's Report.to_html

    run = _report_run(pk)
    response = HttpResponse(standalone_html(run.report, run, request))
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-report.html"'
    return response


@researcher_required
@require_safe
def run_report_json(request: HttpRequest, pk: int) -> JsonResponse:
    run = _report_run(pk)
    response = JsonResponse(run.report, json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-report.json"'
    return response


@researcher_required
@require_safe
def run_report_table(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    """One report table as CSV (every key of every row a column; null as an empty cell)."""
    run, rows = _report_table(pk, name)
    buffer = io.StringIO()
    write_csv(rows, table_columns(rows), buffer)
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-{name}.csv"'
    return response


@researcher_required
@require_http_methods(["POST"])
def run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """Cancel a queued run at once, a running one at its next step."""
    run = get_object_or_404(selectors.run_list(), pk=pk)
    try:
        run = services.run_cancel(run)
    except ValueError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Run {run.pk} cancelled." if run.status == MetaevalRun.Status.CANCELLED
                         else f"Run {run.pk} stops at its next step.")
    return redirect("runs:detail", pk=run.pk)


@researcher_required
@require_http_methods(["POST"])
def run_repeat(request: HttpRequest, pk: int) -> HttpResponse:
    """Run again (retry) with the same settings and seed (regenerates a report; on unchanged data, identically)."""
    run = get_object_or_404(selectors.run_list(), pk=pk)
    again = services.run_repeat(run, user=request.user)
    services.run_launch(again)
    messages.success(request, f"Run {again.pk} repeats run {run.pk} with the same settings and seed.")
    return redirect("runs:detail", pk=again.pk)


@researcher_required
@require_safe
def run_report_table_json(request: HttpRequest, pk: int, name: str) -> JsonResponse:
    """One report table as JSON (a list of rows; NaN as null)."""
    run, rows = _report_table(pk, name)
    response = JsonResponse(rows, safe=False, json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-{name}.json"'
    return response
