"""The HTTP API (/api/): thin views. Reads go through the selectors (``api.selectors``, ``survey.selectors``,
``metaeval.selectors``), writes through ``metaeval.services``; every endpoint is for researchers only
(``api.permissions.IsResearcher``, the default permission)."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.http import Http404, StreamingHttpResponse
from drf_spectacular.renderers import (
    OpenApiJsonRenderer,
    OpenApiJsonRenderer2,
    OpenApiYamlRenderer,
    OpenApiYamlRenderer2,
)
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from drf_spectacular.views import SpectacularAPIView
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import APIException, PermissionDenied, Throttled, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import selectors
from api.parsers import SafeJSONParser
from api.serializers import (
    DatasetSerializer,
    JudgeEndpointSerializer,
    JudgeRunCreateSerializer,
    JudgeRunSerializer,
    JudgmentSetSerializer,
    RunCreateSerializer,
    RunListSerializer,
    RunResultsSerializer,
    RunSerializer,
    StudyDetailSerializer,
    StudyProgressSerializer,
    StudySerializer,
    SystemSerializer,
)
from api.throttling import ScopedAddressThrottle
from metaeval import selectors as metaeval_selectors
from metaeval import services as metaeval_services
from metaeval.models import MetaevalRun
from survey import demo_passwords, exporting, judge_endpoints, judge_runs
from survey import selectors as survey_selectors
from survey.models import Dataset, JudgeRun, Study
from survey.research_views import is_researcher
from survey.selectors.adaptive import study_ranking

_DETAIL = inline_serializer("Detail", {"detail": serializers.CharField()})
_ERRORS = {401: _DETAIL, 403: _DETAIL}


def _dataset(name: str) -> Dataset:
    try:
        return selectors.dataset_get(name=name)
    except Dataset.DoesNotExist:
        raise Http404(f'No dataset "{name}".') from None


def _study(slug: str) -> Study:
    try:
        return selectors.study_get(slug=slug)
    except Study.DoesNotExist:
        raise Http404(f'No study "{slug}".') from None


def _run(pk: int) -> MetaevalRun:
    try:
        return metaeval_selectors.run_get(pk=pk)
    except MetaevalRun.DoesNotExist:
        raise Http404(f"No run {pk}.") from None


# ---------------------------------------------------------------------------------------------- datasets


class DatasetList(APIView):
    @extend_schema(summary="Datasets", responses={200: DatasetSerializer(many=True), **_ERRORS}, tags=["datasets"])
    def get(self, request: Request) -> Response:
        return Response(DatasetSerializer(selectors.dataset_list(), many=True).data)


class DatasetDetail(APIView):
    @extend_schema(summary="One dataset, with its counts", responses={200: DatasetSerializer, 404: _DETAIL, **_ERRORS},
                   tags=["datasets"])
    def get(self, request: Request, name: str) -> Response:
        return Response(DatasetSerializer(_dataset(name)).data)


class DatasetSystems(APIView):
    @extend_schema(
        summary="The systems of a dataset",
        description="Systems with summaries in the dataset (not the readers' own, `user`), by name.",
        responses={200: SystemSerializer(many=True), 404: _DETAIL, **_ERRORS},
        tags=["datasets"],
    )
    def get(self, request: Request, name: str) -> Response:
        systems = survey_selectors.dataset_systems(dataset=_dataset(name))
        return Response(SystemSerializer(systems, many=True).data)


class JudgmentSetList(APIView):
    @extend_schema(
        summary="Pairwise judgment sets",
        description="Stored pairwise judgment files (docs/conventions.md sec. 17) that a report run can add "
        "(`judgment_set` of the run request); imported on the runs page or with `manage.py import_judgments`.",
        responses={200: JudgmentSetSerializer(many=True), **_ERRORS}, tags=["runs"],
    )
    def get(self, request: Request) -> Response:
        return Response(JudgmentSetSerializer(metaeval_selectors.judgment_sets(), many=True).data)


# ----------------------------------------------------------------------------------------------- studies


class StudyList(APIView):
    @extend_schema(
        summary="Studies, newest first",
        parameters=[OpenApiParameter("dataset", str, description="Only the studies of this dataset.")],
        responses={200: StudySerializer(many=True), 400: OpenApiTypes.OBJECT, **_ERRORS},
        tags=["studies"],
    )
    def get(self, request: Request) -> Response:
        name = request.query_params.get("dataset")
        dataset = None
        if name:
            dataset = selectors.dataset_find(name=name)
            if dataset is None:
                raise ValidationError({"dataset": [f'Unknown dataset "{name}".']})
        return Response(StudySerializer(selectors.study_list(dataset=dataset), many=True).data)


class StudyDetail(APIView):
    @extend_schema(summary="One study, with its progress",
                   responses={200: StudyDetailSerializer, 404: _DETAIL, **_ERRORS}, tags=["studies"])
    def get(self, request: Request, slug: str) -> Response:
        study = _study(slug)
        context = {"request": request, "progress": survey_selectors.study_progress(study)}
        return Response(StudyDetailSerializer(study, context=context).data)


class StudyProgressView(APIView):
    @extend_schema(summary="A study's progress",
                   responses={200: StudyProgressSerializer, 404: _DETAIL, **_ERRORS}, tags=["studies"])
    def get(self, request: Request, slug: str) -> Response:
        study = _study(slug)
        return Response(StudyProgressSerializer(survey_selectors.study_progress(study),
                                                context={"ranking": study_ranking(study)}).data)


class _IgnoreFormatNegotiation(DefaultContentNegotiation):
    """The export picks its format from ``?as=`` (or ``?format=``) itself; errors are always JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


#: the exports' format parameter and responses (ratings and judgments alike)
_EXPORT_FORMAT = OpenApiParameter("as", str, enum=list(exporting.FORMATS), default="csv",
                                  description="csv (with a header line) or jsonl (one JSON object a line)")
_EXPORT_RESPONSES = {
    (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV with a header line"),
    (200, "application/x-ndjson"): OpenApiResponse(OpenApiTypes.STR, description="JSON Lines"),
    (400, "application/json"): OpenApiTypes.OBJECT,
    (401, "application/json"): _DETAIL,
    (403, "application/json"): _DETAIL,
    (404, "application/json"): _DETAIL,
}


def _export_format(request: Request) -> str:
    """``?as=`` (or ``?format=``): csv (default) or jsonl; another value is a 400 naming the field."""
    fmt = request.query_params.get("as") or request.query_params.get("format") or "csv"
    if fmt not in exporting.FORMATS:
        raise ValidationError({"as": [f"Unknown format \"{fmt}\"; choose {' or '.join(exporting.FORMATS)}."]})
    return fmt


def _export_stream(study: Study, fmt: str, rows: Iterable[dict[str, object]], columns: Sequence[str],
                   what: str) -> StreamingHttpResponse:
    """``rows`` streamed as ``exporting.stream_export`` writes them (the page downloads send the same bytes)."""
    response = StreamingHttpResponse(exporting.stream_export(rows, fmt, columns),
                                     content_type=exporting.CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{what}.{fmt}"'
    return response


class StudyRatings(APIView):
    content_negotiation_class = _IgnoreFormatNegotiation

    @extend_schema(
        summary="A study's ratings",
        description=(
            "Every rating of the study's completed questionnaires in the export layout of `manage.py "
            "export_ratings` (`doc_id,system,uid1,uid2,rating,rater,study,questionnaire,shown_position,swapped,"
            "claimed_at,completed_at,rated_at,automatic,review,excluded,review_note`; `automatic` is 1 for an "
            "identical pair recorded at the top of the scale without being shown, under the study setting "
            "`identical_pairs=auto`; the last three are the rater's review on the participants page, `excluded` 1 "
            "for a participant excluded from scoring, whose rows `python -m metaeval` leaves out), streamed. Choose "
            "the format with `?as=csv` (default) or "
            "`?as=jsonl`; `?format=` is accepted as a synonym."
        ),
        parameters=[_EXPORT_FORMAT],
        responses=_EXPORT_RESPONSES,
        tags=["studies"],
    )
    def get(self, request: Request, slug: str) -> StreamingHttpResponse:
        fmt = _export_format(request)
        study = _study(slug)
        return _export_stream(study, fmt, survey_selectors.ratings_export_rows(study=study),
                              survey_selectors.EXPORT_COLUMNS, "ratings")


class StudyJudgments(APIView):
    content_negotiation_class = _IgnoreFormatNegotiation

    @extend_schema(
        summary="A preference study's judgments",
        description=(
            "Every judgment of the study's completed questionnaires as a judgment file (`manage.py "
            "export_judgments`: `case_id,criterion,model_a,model_b,winner,judge,judge_kind,run,shown_first,doc_id,"
            "reader_id,review,excluded,review_note`; what `python -m metaeval pairwise` reads, leaving out the rows "
            "with `excluded` 1), streamed; `?as=csv` (default) or `?as=jsonl`. "
            "A sentence preference study gives Zopf's file instead (`topic,sentence_a,sentence_b,winner,judge,"
            "shown_first,criterion,judge_kind,review,excluded,review_note`; what `python -m metaeval zopf` reads). "
            "409 for a similarity study (its ratings are under `ratings/`)."
        ),
        parameters=[_EXPORT_FORMAT, OpenApiParameter(
            "source", str, enum=list(survey_selectors.JUDGMENT_SOURCES), default="all",
            description="human: the participants'; llm: the judge runs' (judge_kind llm, run = the repeat); all: "
            "both, participants first")],
        responses={**_EXPORT_RESPONSES, (409, "application/json"): _DETAIL},
        tags=["studies"],
    )
    def get(self, request: Request, slug: str) -> StreamingHttpResponse | Response:
        fmt = _export_format(request)
        source = request.query_params.get("source") or "all"
        if source not in survey_selectors.JUDGMENT_SOURCES:
            raise ValidationError({"source": [f"Unknown source \"{source}\"; choose "
                                              f"{', '.join(survey_selectors.JUDGMENT_SOURCES)}."]})
        study = _study(slug)
        if not study.is_pairwise:
            raise _Conflict(f'Study "{slug}" collects ratings, not judgments: see its ratings/.')
        rows, columns = survey_selectors.study_judgment_file(study=study, source=source)
        return _export_stream(study, fmt, rows, columns, "judgments")


def _judged_study(slug: str) -> Study:
    """A study LLM judges answer: a preference or a sentence preference study (409 for a rating study)."""
    study = _study(slug)
    if not study.is_pairwise:
        raise _Conflict(f'Study "{slug}" collects ratings, not judgments: see its ratings/.')
    return study


class _Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "Conflict."


def _judge_run(study: Study, pk: int) -> JudgeRun:
    try:
        return JudgeRun.objects.select_related("study", "created_by").get(pk=pk, study=study)
    except JudgeRun.DoesNotExist:
        raise Http404(f'No judge run {pk} in study "{study.slug}".') from None


class StudyJudgeRuns(APIView):
    @extend_schema(
        summary="A preference study's LLM judge runs, newest first",
        responses={200: JudgeRunSerializer(many=True), 404: _DETAIL, 409: _DETAIL, **_ERRORS}, tags=["studies"],
    )
    def get(self, request: Request, slug: str) -> Response:
        study = _judged_study(slug)
        runs = [row.run for row in survey_selectors.study_judge_runs(study=study)]
        return Response(JudgeRunSerializer(runs, many=True).data)

    @extend_schema(
        summary="Start an LLM judge run",
        description=(
            "Queues a run that asks the judge about every item of the study, `runs` times per criterion with half "
            "of the runs in each order (docs/conventions.md sec. 21), and sends it to a Celery worker; the "
            "answer is the run as it is then (already finished when the server runs tasks eagerly). Follow it "
            "with `GET .../judge-runs/{id}/`; its judgments come with `judgments/?source=llm`."
        ),
        request=JudgeRunCreateSerializer,
        responses={201: JudgeRunSerializer, 400: OpenApiTypes.OBJECT, 404: _DETAIL, 409: _DETAIL, **_ERRORS},
        tags=["studies"],
    )
    def post(self, request: Request, slug: str) -> Response:
        study = _judged_study(slug)
        serializer = JudgeRunCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            run = judge_runs.judge_run_create(
                study=study, endpoint=data["endpoint"], kind=data.get("kind"), settings=data["settings"],
                criteria=data.get("criteria"), runs=data["runs"], templates=data.get("templates"), user=request.user)
        except judge_runs.JudgeRunError as exc:
            raise ValidationError({"non_field_errors": [str(exc)]}) from exc
        return Response(JudgeRunSerializer(_judge_run(study, run.pk)).data, status=status.HTTP_201_CREATED)


class StudyJudgesVsPeople(APIView):
    @extend_schema(
        summary="Every LLM judge (and prompt version) of a preference study against its people",
        description=(
            "Per criterion and judge column: agreement (accuracy, Cohen's kappa, the human-human ceiling, position "
            "and self-consistency, length bias), the agreement matrix, PPI and PPI++ estimates beside the "
            "people-only ones, the alternative annotator test, style-controlled leaderboards "
            "(docs/conventions.md sec. 28-29; docs/guide/judges.md). `error` says why there is nothing to compare "
            "(no judge run or no participant yet); `versions` lists the columns' runs and prompt SHA-256."
        ),
        responses={200: OpenApiTypes.OBJECT, 404: _DETAIL, 409: _DETAIL, **_ERRORS}, tags=["studies"],
    )
    def get(self, request: Request, slug: str) -> Response:
        study = _judged_study(slug)
        if study.kind != Study.Kind.PREFERENCE:
            raise _Conflict(f'Study "{slug}" is a sentence preference study; judges against people compare the '
                            "items of a preference (A/B) study.")
        return Response(survey_selectors.study_versus(study=study))


class JudgeEndpointList(APIView):
    @extend_schema(
        summary="The judge endpoints a judge run may use",
        description="Configured by the operator in the admin (Judge endpoints): a run names one (`endpoint`) and "
        "sets only its sampling settings; base URL, key variable and model folder stay with the operator.",
        responses={200: JudgeEndpointSerializer(many=True), **_ERRORS}, tags=["studies"],
    )
    def get(self, request: Request) -> Response:
        return Response(JudgeEndpointSerializer(judge_endpoints.endpoints_available(), many=True).data)


class StudyJudgeRunDetail(APIView):
    @extend_schema(summary="One judge run", responses={200: JudgeRunSerializer, 404: _DETAIL, **_ERRORS},
                   tags=["studies"])
    def get(self, request: Request, slug: str, pk: int) -> Response:
        return Response(JudgeRunSerializer(_judge_run(_judged_study(slug), pk)).data)


class StudyJudgeRunAction(APIView):
    action = ""

    @extend_schema(
        summary="Cancel or resume a judge run",
        description="cancel: a queued run ends at once, a running one at its next judgment (what is stored "
        "stays). resume: a failed or cancelled run is queued again and skips what is stored (409 otherwise).",
        request=None, responses={200: JudgeRunSerializer, 404: _DETAIL, 409: _DETAIL, **_ERRORS},
        tags=["studies"],
    )
    def post(self, request: Request, slug: str, pk: int) -> Response:
        study = _judged_study(slug)
        run = _judge_run(study, pk)
        try:
            run = judge_runs.judge_run_cancel(run) if self.action == "cancel" else judge_runs.judge_run_resume(run)
        except judge_runs.JudgeRunError as exc:
            raise _Conflict(str(exc)) from exc
        return Response(JudgeRunSerializer(_judge_run(study, run.pk)).data)


# -------------------------------------------------------------------------------------------------- runs


class RunList(APIView):
    @extend_schema(
        summary="Runs, newest first",
        description="Without their results (see `/api/runs/{id}/results/`).",
        parameters=[
            OpenApiParameter("dataset", str, description="Only runs of this dataset."),
            OpenApiParameter("study", str, description="Only runs of this study."),
            OpenApiParameter("status", str, enum=list(MetaevalRun.Status.values),
                             description="Only runs in this state."),
        ],
        responses={200: RunListSerializer(many=True), 400: OpenApiTypes.OBJECT, **_ERRORS},
        tags=["runs"],
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        errors: dict[str, list[str]] = {}
        dataset = study = None
        if params.get("dataset"):
            dataset = selectors.dataset_find(name=params["dataset"])
            if dataset is None:
                errors["dataset"] = [f'Unknown dataset "{params["dataset"]}".']
        if params.get("study"):
            study = selectors.study_find(slug=params["study"])
            if study is None:
                errors["study"] = [f'Unknown study "{params["study"]}".']
        state = params.get("status") or None
        if state is not None and state not in MetaevalRun.Status.values:
            errors["status"] = [f"Unknown status \"{state}\"; choose {', '.join(MetaevalRun.Status.values)}."]
        if errors:
            raise ValidationError(errors)
        runs = metaeval_selectors.run_list(dataset=dataset, study=study, status=state)
        return Response(RunListSerializer(runs, many=True, context={"request": request}).data)

    @extend_schema(
        summary="Start a run",
        description=(
            "Queues the run and sends it to a Celery worker (`metaeval.services.run_enqueue`, `run_launch`); the "
            "answer is the run as it is then (queued or running; already finished when the server runs tasks "
            "eagerly, without a broker). "
            "Follow it with `GET /api/runs/{id}/`. With a study and no `aux`, the HJ variants use rouge_l. "
            "A neural measure whose model is not on the server is listed under `unavailable`."
        ),
        request=RunCreateSerializer,
        responses={201: RunSerializer, 400: OpenApiTypes.OBJECT, **_ERRORS},
        tags=["runs"],
    )
    def post(self, request: Request) -> Response:
        serializer = RunCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            run = metaeval_services.run_enqueue(
                dataset=data["dataset"], study=data.get("study"), options=serializer.run_options(),
                user=request.user, exclude_raters=data.get("exclude_raters") or (), kind=data["kind"],
                seed=data.get("seed"), report=data.get("report") if data["kind"] == "report" else None,
                judgment_set=data.get("judgment_set"),
            )
        except ValueError as exc:  # the service's own checks (the serializer makes the same ones first)
            raise ValidationError({"non_field_errors": [str(exc)]}) from exc
        metaeval_services.run_launch(run)
        run = metaeval_selectors.run_get(pk=run.pk)
        return Response(RunSerializer(run, context={"request": request}).data, status=status.HTTP_201_CREATED)


class RunDetail(APIView):
    @extend_schema(summary="One run: state, progress, parameters, provenance",
                   responses={200: RunSerializer, 404: _DETAIL, **_ERRORS}, tags=["runs"])
    def get(self, request: Request, pk: int) -> Response:
        return Response(RunSerializer(_run(pk), context={"request": request}).data)


class RunCancel(APIView):
    @extend_schema(
        summary="Cancel a run",
        description="A queued run is cancelled at once; a running one stops at its worker's next step "
        "(`cancel_requested` is true until then). A finished run gives 409.",
        request=None, responses={200: RunSerializer, 404: _DETAIL, 409: _DETAIL, **_ERRORS}, tags=["runs"],
    )
    def post(self, request: Request, pk: int) -> Response:
        run = _run(pk)
        try:
            run = metaeval_services.run_cancel(run)
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(RunSerializer(metaeval_selectors.run_get(pk=run.pk), context={"request": request}).data)


class RunRetry(APIView):
    @extend_schema(
        summary="Run again (retry)",
        description="A new queued run with the same dataset, study, options, excluded raters, kind, report settings "
        "and seed, sent to a worker; for a failed or cancelled run this is the retry.",
        request=None, responses={201: RunSerializer, 404: _DETAIL, **_ERRORS}, tags=["runs"],
    )
    def post(self, request: Request, pk: int) -> Response:
        again = metaeval_services.run_repeat(_run(pk), user=request.user)
        metaeval_services.run_launch(again)
        return Response(RunSerializer(metaeval_selectors.run_get(pk=again.pk), context={"request": request}).data,
                        status=status.HTTP_201_CREATED)


class RunResults(APIView):
    @extend_schema(
        summary="A finished run's score table",
        description="The score table (one row per system and measure; NaN as null) and the HJ pair counts. "
        "409 while the run is queued or running, or when it failed.",
        responses={200: RunResultsSerializer, 404: _DETAIL, 409: OpenApiTypes.OBJECT, **_ERRORS},
        tags=["runs"],
    )
    def get(self, request: Request, pk: int) -> Response:
        run = _run(pk)
        if run.status != MetaevalRun.Status.DONE:
            detail = f"Run {run.pk} is {run.status}" + (f": {run.error}" if run.error else "; no results yet.")
            return Response({"detail": detail, "status": run.status}, status=status.HTTP_409_CONFLICT)
        return Response(RunResultsSerializer(RunResultsSerializer.of(run)).data)


class RunReport(APIView):
    @extend_schema(
        summary="A finished report run's report document",
        description="Parameters (with the seed), figure data and every table (`tables`: name -> rows), as "
        "`metaeval.core.perseval.report.build_report` returns it; NaN as null. 409 while the run is not done, or "
        "when it is not a report run.",
        responses={200: OpenApiTypes.OBJECT, 404: _DETAIL, 409: OpenApiTypes.OBJECT, **_ERRORS},
        tags=["runs"],
    )
    def get(self, request: Request, pk: int) -> Response:
        run = _run(pk)
        if run.kind != MetaevalRun.Kind.REPORT:
            return Response({"detail": f"Run {run.pk} is a {run.kind} run; start one with kind=report.",
                             "status": run.status}, status=status.HTTP_409_CONFLICT)
        if run.status != MetaevalRun.Status.DONE:
            detail = f"Run {run.pk} is {run.status}" + (f": {run.error}" if run.error else "; no report yet.")
            return Response({"detail": detail, "status": run.status}, status=status.HTTP_409_CONFLICT)
        return Response(run.report)


# ------------------------------------------------------------------------------------------------ schema


class SchemaView(SpectacularAPIView):
    """The OpenAPI 3 document: JSON unless YAML is asked for (``?format=yaml`` or ``Accept: application/yaml``)."""

    renderer_classes = [OpenApiJsonRenderer2, OpenApiJsonRenderer, OpenApiYamlRenderer, OpenApiYamlRenderer2]


# ------------------------------------------------------------------------------------------------- token


class ObtainResearcherToken(ObtainAuthToken):
    """``rest_framework.authtoken``'s token view, for researchers only: other accounts get 403 and no token.
    Rate-limited per address (the ``login`` rate, 429 beyond it), and locked per username and address after
    repeated wrong passwords like every login (django-axes); with DEBUG off a published demo password is refused
    (400, saying so)."""

    throttle_classes = [ScopedAddressThrottle]
    throttle_scope = "login"
    parser_classes = [FormParser, MultiPartParser, SafeJSONParser]

    @extend_schema(
        summary="Get your API token",
        description="POST `username` and `password` (JSON or form); use the answer as `Authorization: Token <key>`. "
        "The same key every time, until an admin deletes it.",
        request=AuthTokenSerializer,
        responses={200: inline_serializer("Token", {"token": serializers.CharField()}), 400: OpenApiTypes.OBJECT,
                   403: _DETAIL, 429: _DETAIL},
        auth=[],
        tags=["auth"],
    )
    def post(self, request: Request, *args, **kwargs) -> Response:
        serializer = self.get_serializer(data=request.data)
        valid = serializer.is_valid()
        if getattr(request, "axes_locked_out", False):  # set by django-axes' backend on a locked username
            raise Throttled(detail="Too many failed log-ins for this username from your address; try again later.")
        if not valid:
            if demo_passwords.refused(serializer.initial_data.get("password")):  # DEBUG off: say why
                raise ValidationError({"non_field_errors": [demo_passwords.REFUSED]})
            raise ValidationError(serializer.errors)
        user = serializer.validated_data["user"]
        if not is_researcher(user):
            raise PermissionDenied("Researcher access required.")
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})
