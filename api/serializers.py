"""What the API reads and writes. Read serializers are plain views of models and selector results; the run
request serializer only validates (the run is queued by ``metaeval.services.run_enqueue``)."""
from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from api import selectors as api_selectors
from metaeval import selectors as metaeval_selectors
from metaeval.core.measures.registry import MEASURES, NEURAL, measure_option_names
from metaeval.core.options import SEED_MAX, OptionError
from metaeval.core.perseval.measure import PARAMETERS
from metaeval.core.perseval.pipeline import COLUMNS, DEFAULT_AUX, RunOptions
from metaeval.core.perseval.report import REPORT_OPTIONS
from metaeval.core.perseval.report import check_settings as check_report_settings
from metaeval.models import JudgmentSet, MetaevalRun
from metaeval.option_fields import OptionSerializerField
from metaeval.run_policy import measure_options_problems
from survey.models import Dataset, JudgeEndpoint, JudgeRun, Study, System

# ---------------------------------------------------------------------------------------------- datasets


class DatasetSerializer(serializers.ModelSerializer):
    documents = serializers.IntegerField(source="document_count", read_only=True)
    readers = serializers.IntegerField(source="reader_count", read_only=True)
    systems = serializers.IntegerField(
        source="system_count", read_only=True, help_text="Systems with summaries, the readers' own (user) left out."
    )
    summaries = serializers.IntegerField(source="summary_count", read_only=True)
    studies = serializers.IntegerField(source="study_count", read_only=True)

    class Meta:
        model = Dataset
        fields = ["name", "description", "source", "created_at", "documents", "readers", "systems", "summaries",
                  "studies"]


class SystemSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.CharField()
    variant = serializers.CharField()
    description = serializers.CharField()
    summaries = serializers.IntegerField(source="summary_count", help_text="Summaries in this dataset.")


# ----------------------------------------------------------------------------------------------- studies


class StudySerializer(serializers.ModelSerializer):
    dataset: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="name", read_only=True)
    systems: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="name", many=True, read_only=True
    )

    class Meta:
        model = Study
        fields = [
            "slug", "title", "dataset", "status", "systems", "systems_per_questionnaire", "raters_per_questionnaire",
            "assignment_timeout_minutes", "pair_mode", "pairs_per_document", "seed", "scale_labels", "created_at",
        ]


class StudyProgressSerializer(serializers.Serializer):
    """``survey.selectors.study_progress``."""

    questionnaires = serializers.IntegerField()
    complete = serializers.IntegerField(help_text="Questionnaires with every slot completed.")
    all_slots_taken = serializers.IntegerField(
        help_text="Not complete, but every slot is held (being rated or submitted): nothing to hand out now."
    )
    with_free_slot = serializers.IntegerField(
        help_text="Questionnaires with fewer live or completed assignments than raters_per_questionnaire: the next "
        "participant can get one. complete + all_slots_taken + with_free_slot = questionnaires."
    )
    free_slots = serializers.IntegerField(help_text="Free slots over all questionnaires.")
    ratings_sets = serializers.IntegerField(help_text="Completed assignments.")
    ratings_sets_needed = serializers.IntegerField()
    participants = serializers.IntegerField(help_text="Participants with a completed questionnaire.")
    percent = serializers.FloatField()
    ratings_per_system = serializers.DictField(child=serializers.IntegerField())
    ranking = serializers.SerializerMethodField(
        help_text="Preference studies: the live ranking with rank ranges, tied bands, the stopping status and the "
        "judgments saved (survey.selectors.adaptive.study_ranking, conventions sec. 27.8); null otherwise."
    )

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_ranking(self, progress: object) -> dict | None:
        """The view passes ``study_ranking(study)`` as ``context["ranking"]``."""
        return self.context.get("ranking")  # type: ignore[no-any-return]


class StudyDetailSerializer(StudySerializer):
    progress = serializers.SerializerMethodField()

    class Meta(StudySerializer.Meta):
        fields = [*StudySerializer.Meta.fields, "instructions", "completion_url", "progress"]

    @extend_schema_field(StudyProgressSerializer)
    def get_progress(self, study: Study) -> dict:
        """The view passes ``survey.selectors.study_progress(study)`` as ``context["progress"]``."""
        return StudyProgressSerializer(self.context["progress"]).data


# -------------------------------------------------------------------------------------------------- runs


class RunProgressSerializer(serializers.Serializer):
    """``metaeval.selectors.run_progress`` (what the run page polls)."""

    step = serializers.CharField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.FloatField()
    messages = serializers.ListField(child=serializers.CharField())


class RunSerializer(serializers.ModelSerializer):
    """A run without its results (those are under ``/api/runs/{id}/results/``)."""

    dataset: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="name", read_only=True)
    study: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    created_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="username", read_only=True)
    judgment_set: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="name", read_only=True, help_text="The pairwise judgment set a report adds (or null)."
    )
    progress = serializers.SerializerMethodField()
    results = serializers.SerializerMethodField(help_text="Where the score table is, once the run is done.")

    class Meta:
        model = MetaevalRun
        fields = [
            "id", "kind", "status", "dataset", "study", "judgment_set", "created_by", "created_at", "started_at",
            "finished_at", "progress", "parameters", "seed", "excluded_raters", "versions", "data_hash", "timings",
            "unavailable", "measure_models", "error", "results", "attempts", "worker", "cancel_requested",
        ]
        read_only_fields = fields

    @extend_schema_field(RunProgressSerializer)
    def get_progress(self, run: MetaevalRun) -> dict:
        progress = metaeval_selectors.run_progress(run)
        return {key: progress[key] for key in ("step", "done", "total", "percent", "messages")}

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_results(self, run: MetaevalRun) -> str | None:
        if run.status != MetaevalRun.Status.DONE:
            return None
        return reverse("api:run-results", kwargs={"pk": run.pk}, request=self.context.get("request"))


class RunListSerializer(RunSerializer):
    class Meta(RunSerializer.Meta):
        fields = [
            "id", "kind", "status", "dataset", "study", "judgment_set", "created_by", "created_at", "started_at",
            "finished_at", "parameters", "seed", "excluded_raters", "data_hash", "error", "results",
        ]
        read_only_fields = fields


class ScoreRowSerializer(serializers.Serializer):
    """One row of the score table (``metaeval.core.perseval.pipeline.COLUMNS``); NaN is null."""

    system = serializers.CharField()
    measure = serializers.CharField(help_text='A distance measure, or "hj:<aux>" for an HJ variant.')
    egises = serializers.FloatField(allow_null=True)
    degress = serializers.FloatField(allow_null=True)
    perseval = serializers.FloatField(allow_null=True)
    accuracy = serializers.FloatField(allow_null=True)
    p_acc = serializers.FloatField(allow_null=True)
    egises_accuracy = serializers.FloatField(allow_null=True)
    documents = serializers.IntegerField(allow_null=True)
    readers = serializers.IntegerField(allow_null=True)
    rows = serializers.IntegerField(allow_null=True)
    rated_pairs = serializers.IntegerField(allow_null=True)
    skipped_pairs = serializers.IntegerField(allow_null=True)


assert tuple(ScoreRowSerializer._declared_fields) == COLUMNS, "ScoreRowSerializer must follow pipeline.COLUMNS"


class RunResultsSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    columns = serializers.ListField(child=serializers.CharField())
    scores = ScoreRowSerializer(many=True)
    hj_counts = serializers.DictField(
        child=serializers.DictField(child=serializers.DictField(child=serializers.IntegerField())),
        help_text="hj:<aux> -> system -> counts of rated and skipped pairs.",
    )
    distances = serializers.ListField(child=serializers.DictField(), help_text="Per-measure distance statistics.")
    unavailable = serializers.DictField(child=serializers.CharField())
    measure_models = serializers.DictField(child=serializers.CharField())

    @staticmethod
    def of(run: MetaevalRun) -> dict[str, object]:
        return {
            "id": run.pk, "status": run.status, "columns": list(COLUMNS),
            # rows keep the COLUMNS order whatever order the database returns the JSON keys in
            "scores": [{column: row.get(column) for column in COLUMNS} for row in run.scores],
            "hj_counts": run.hj_counts, "distances": run.distances, "unavailable": run.unavailable,
            "measure_models": run.measure_models,
        }


#: the longest name a run request carries (a dataset's, a study's or a system's: their columns' length)
NAME_MAX = 100
assert NAME_MAX == Dataset._meta.get_field("name").max_length == Study._meta.get_field("slug").max_length \
    == System._meta.get_field("name").max_length == JudgmentSet._meta.get_field("name").max_length


class NameListField(serializers.ListField):
    """A list of names, or one comma-separated string (``"rouge_l,jsd"``); blanks dropped, duplicates merged."""

    child = serializers.CharField(allow_blank=True, max_length=NAME_MAX)

    def to_internal_value(self, data):
        if isinstance(data, str):
            data = data.split(",")
        names = super().to_internal_value(data)
        return list(dict.fromkeys(name.strip() for name in names if name.strip()))


class RunCreateSerializer(serializers.Serializer):
    """A run request. Unknown dataset, study, measure, system or rater ids are errors of their field."""

    dataset = serializers.CharField(max_length=NAME_MAX, help_text="Dataset name.")
    study = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, max_length=NAME_MAX,
        help_text="Slug of a study of that dataset whose ratings give the HJ variants.",
    )
    measures = NameListField(
        required=False, help_text=f"Distance measures (default rouge_l): {', '.join(MEASURES)}."
    )
    aux = NameListField(
        required=False,
        help_text="Auxiliary measures of the HJ variants; need a study (with a study and none given: rouge_l).",
    )
    compat = serializers.BooleanField(
        required=False, default=False, help_text="The authors' compatibility mode (--compat authors)."
    )
    missing = serializers.ChoiceField(choices=["error", "drop"], default="error",
                                      help_text="A missing summary fails the run, or drops the reader.")
    preprocess = serializers.ChoiceField(choices=["none", "authors"], default="none")
    systems = NameListField(required=False, help_text="Systems to score (default: all of the dataset).")
    exclude_raters = NameListField(
        required=False, help_text='Rater ids as in the ratings export ("P12" or 12) to leave out; need a study.'
    )
    measure_options = serializers.DictField(
        child=serializers.DictField(), required=False,
        help_text='Options of the neural measures, e.g. {"infolm": {"temperature": 0.25}}; model and baseline only '
        "among those the operator allows (METAEVAL_ALLOWED_MODELS, METAEVAL_ALLOWED_BASELINES).",
    )
    kind = serializers.ChoiceField(
        choices=["scores", "report"], default="scores",
        help_text="scores: the score table; report: also the full report (CIs, permutation tests, beta ablation, "
        "stability, Borda-Kendall, rater agreement) at /api/runs/{id}/report/.",
    )
    seed = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=SEED_MAX,
                                    help_text="Seed of every random draw of a report (default: a fresh one, stored).")
    judgment_set = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, max_length=NAME_MAX,
        help_text="Name of a pairwise judgment set (GET /api/judgment-sets/); kind report only: the report adds "
        "its pairwise section (Elo, Bradley-Terry, win/tie/loss, consistency).",
    )
    report = serializers.DictField(
        required=False,
        help_text="Report settings: " + "; ".join(f"{o.name}: {o.describe()}" for o in REPORT_OPTIONS) + ".",
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        """The PerSEval parameters from :data:`metaeval.core.perseval.measure.PARAMETERS` (checked as the CLI
        checks)."""
        fields = super().get_fields()
        for option in PARAMETERS:
            fields[option.name] = OptionSerializerField(option)
        return fields

    def to_internal_value(self, data):
        # "compat": "authors" (as the CLI writes it) is accepted besides true/false
        if isinstance(data, dict) and data.get("compat") in ("authors", "none", None):
            data = {**data, "compat": data.get("compat") == "authors"}
        return super().to_internal_value(data)

    def validate_dataset(self, name: str) -> Dataset:
        dataset = api_selectors.dataset_find(name=name)
        if dataset is None:
            known = ", ".join(Dataset.objects.values_list("name", flat=True)) or "none"
            raise serializers.ValidationError(f'Unknown dataset "{name}" (known: {known}).')
        return dataset

    def validate_judgment_set(self, name: str | None) -> JudgmentSet | None:
        if not name:
            return None
        found = metaeval_selectors.judgment_sets().filter(name=name).first()
        if found is None:
            known = ", ".join(metaeval_selectors.judgment_sets().values_list("name", flat=True)) or "none"
            raise serializers.ValidationError(f'Unknown judgment set "{name}" (known: {known}).')
        return found

    def validate_study(self, slug: str | None) -> Study | None:
        if not slug:
            return None
        study = api_selectors.study_find(slug=slug)
        if study is None:
            raise serializers.ValidationError(f'Unknown study "{slug}".')
        return study

    @staticmethod
    def _check_measures(names: list[str]) -> list[str]:
        unknown = [name for name in names if name not in MEASURES]
        if unknown:
            raise serializers.ValidationError(
                f"Unknown measure {', '.join(unknown)} (choose from {', '.join(MEASURES)})."
            )
        return names

    def validate_measures(self, names: list[str]) -> list[str]:
        return self._check_measures(names)

    def validate_aux(self, names: list[str]) -> list[str]:
        return self._check_measures(names)

    def validate_exclude_raters(self, names: list[str]) -> list[str]:
        ids, bad = metaeval_selectors.parse_rater_ids(names)
        if bad:
            raise serializers.ValidationError(f"Not a rater id: {', '.join(bad)} (write P12 or 12).")
        return ids

    def validate_report(self, value: dict) -> dict:
        try:
            return check_report_settings(value)
        except OptionError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def validate_measure_options(self, value: dict) -> dict:
        for name, options in value.items():
            if name not in NEURAL:
                raise serializers.ValidationError(f"Only {', '.join(NEURAL)} take options, not {name!r}.")
            allowed = measure_option_names(name)
            unknown = sorted(set(options) - set(allowed))
            if unknown:
                raise serializers.ValidationError(
                    f"{name} has no option {', '.join(unknown)} (it takes {', '.join(allowed)})."
                )
        problems = measure_options_problems(value)  # what names a thing on the worker is the operator's
        if problems:
            raise serializers.ValidationError(problems)
        return value

    def validate(self, data: dict) -> dict:
        dataset, study = data["dataset"], data.get("study")
        errors = metaeval_selectors.run_request_errors(
            dataset=dataset, study=study, aux=data.get("aux") or [], exclude_raters=data.get("exclude_raters") or [],
            systems=data.get("systems") or [],
        )
        if "measures" in data and not data["measures"] and not data.get("aux"):
            errors["measures"] = "Give at least one measure."
        if data.get("judgment_set") is not None and data.get("kind") != "report":
            errors["judgment_set"] = "Pairwise judgments go with a full report: give kind report."
        if errors:
            raise serializers.ValidationError(errors)
        return data

    def run_options(self) -> RunOptions:
        """The validated request as :class:`RunOptions` (``RunOptions.from_dict`` fills in the defaults).

        A neural measure whose model is not on the server is listed under ``unavailable`` instead of failing
        the run (as on the run form)."""
        data = dict(self.validated_data)
        if data.get("study") is not None and not data.get("aux"):
            data["aux"] = list(DEFAULT_AUX)
        parameters = {
            key: value for key, value in data.items()
            if key not in ("dataset", "study", "exclude_raters", "kind", "seed", "report")
        }
        parameters["compat"] = "authors" if data.get("compat") else None
        parameters["skip_unavailable"] = True
        return RunOptions.from_dict(parameters)


class JudgmentSetSerializer(serializers.ModelSerializer):
    """A stored pairwise judgment file (without its bytes)."""

    created_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = JudgmentSet
        fields = ["name", "description", "file_name", "sha256", "judgments", "invalid", "games", "criteria",
                  "systems", "created_by", "created_at"]
        read_only_fields = fields


# -------------------------------------------------------------------------------------------- judge runs


class JudgeRunSerializer(serializers.ModelSerializer):
    """An LLM judge run of a preference study (``survey.judge_runs``); ``settings`` never holds an API key."""

    study: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    settings = serializers.JSONField(source="judge_settings", read_only=True)
    created_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = JudgeRun
        fields = ["id", "study", "kind", "name", "settings", "criteria", "runs", "templates_sha256", "source_file",
                  "source_sha256", "status", "total", "done", "error", "cancel_requested", "attempts", "created_by",
                  "created_at", "started_at", "finished_at"]
        read_only_fields = fields


class JudgeEndpointSerializer(serializers.ModelSerializer):
    """A judge endpoint researchers may choose (``survey.judge_endpoints``): its name, kind and models; where it
    is and which key it uses stay with the operator."""

    models = serializers.ListField(source="model_names", child=serializers.CharField(), read_only=True,
                                   help_text="openai: the models a run may pick (settings.model); the first is "
                                   "the default")

    class Meta:
        model = JudgeEndpoint
        fields = ["name", "kind", "description", "models", "max_concurrency"]
        read_only_fields = fields


class JudgeRunCreateSerializer(serializers.Serializer):
    """Start a judge run: ``survey.judge_runs.judge_run_create`` checks the endpoint and the settings (errors come
    back under ``non_field_errors``, naming the setting)."""

    endpoint = serializers.CharField(max_length=100, help_text="A judge endpoint's name (GET /api/judge-endpoints/)")
    kind = serializers.ChoiceField(choices=["openai", "transformers"], required=False,
                                   help_text="Optional: when given, the endpoint's kind must be this")
    settings = serializers.DictField(
        required=False, default=dict,
        help_text="The run's sampling settings; openai: model (one of the endpoint's models), temperature, "
        "max_tokens, timeout, retries, backoff, seed, concurrency (at most the endpoint's), name; transformers: "
        "max_new_tokens, temperature, seed, name. Base URL, API key variable, model folder and device are the "
        "operator's (the endpoint's) and refused here.")
    criteria = serializers.ListField(child=serializers.CharField(), required=False,
                                     help_text="Default: every criterion of the study")
    runs = serializers.IntegerField(min_value=2, max_value=1000, default=40,
                                    help_text="Judgments per item and criterion, even")
    templates = serializers.DictField(required=False, allow_null=True,
                                      help_text='{criterion: {"system": ..., "user": ...}}; default: AuPEL\'s')
