"""Participant forms (ratings are validated in services, since their field names are per assignment)."""
import json
from collections.abc import Sequence

from django import forms

from config.uploads import LimitedFileField
from metaeval.core import jsonsafe
from survey.models import JudgeEndpoint, Participant

#: the longest crowd-platform participant id we record (Participant.external_id)
CROWD_ID_MAX = 200


class ConsentForm(forms.Form):
    consent = forms.BooleanField(
        required=True,
        label="I have read the information above and agree to take part.",
        error_messages={"required": "Please tick the consent box to continue."},
    )
    external_id = forms.CharField(
        required=False, max_length=CROWD_ID_MAX, widget=forms.HiddenInput,
        error_messages={"max_length": "The participant id your crowd platform passed is longer than "
                        f"{CROWD_ID_MAX} characters, so it cannot be recorded (and you could not be paid). Please "
                        "return to the platform and tell the researcher."},
    )
    external_source = forms.CharField(required=False, max_length=50, widget=forms.HiddenInput)

    def hidden_errors(self) -> list[str]:
        """Errors of the hidden fields, which the page shows above the consent box (a participant cannot fix
        them, but must learn why nothing happened)."""
        return [str(error) for name in ("external_id", "external_source") for error in self.errors.get(name, [])]


class DemographicsForm(forms.Form):
    name = forms.CharField(
        required=False,
        max_length=200,
        label="Your name (optional)",
        help_text="Only if you want to be listed as a contributor when the data are published.",
    )
    gender = forms.ChoiceField(
        required=False, choices=[("", "—")] + list(Participant.Gender.choices), label="Gender (optional)"
    )
    occupation = forms.ChoiceField(
        required=False, choices=[("", "—")] + list(Participant.Occupation.choices), label="Occupation (optional)"
    )


class DesignCostForm(forms.Form):
    """The design preview's one input: what a participant is paid per hour, for the cost estimate."""

    price_per_hour = forms.DecimalField(
        required=False, min_value=0, max_value=100000, decimal_places=2, label="Pay per participant-hour",
        help_text="In your currency; leave empty for no cost estimate.",
    )


class JudgeRunForm(forms.Form):
    """Start an LLM judge run (``survey.judge_runs.judge_run_create`` checks every value)."""

    judge = forms.ChoiceField(
        label="Judge", help_text="An endpoint (and model) that the operator configured; ask an administrator for "
        "another one (admin: Judge endpoints)")
    name = forms.CharField(required=False, max_length=200, label="Judge name",
                           help_text="The judge column of the export (default: the model's name)")
    temperature = forms.FloatField(required=False, min_value=0, initial=0.0)
    max_tokens = forms.IntegerField(required=False, min_value=1, initial=8, label="Most tokens per reply")
    retries = forms.IntegerField(required=False, min_value=0, initial=5,
                                 help_text="openai: retries after a timeout, 429 or 5xx, with backoff")
    timeout = forms.FloatField(required=False, min_value=0.001, initial=60.0, label="Timeout (s)")
    concurrency = forms.IntegerField(required=False, min_value=1, max_value=64, initial=4,
                                     help_text="openai: requests at once")
    seed = forms.IntegerField(required=False, min_value=0)
    runs = forms.IntegerField(min_value=2, max_value=1000, initial=40,
                              help_text="Judgments per item and criterion, even: half show each system first")
    criteria = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, required=False)
    templates = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
        help_text='JSON {criterion: {"system": ..., "user": ...}} with {context}, {examples}, {first}, {second}; '
        "empty: the default templates")

    def __init__(self, *args: object, criteria: list[str], endpoints: Sequence[JudgeEndpoint] = (),
                 **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        field = self.fields["criteria"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = [(name, name) for name in criteria]
        self.fields["criteria"].initial = criteria
        judge = self.fields["judge"]
        assert isinstance(judge, forms.ChoiceField)
        judge.choices = judge_choices(endpoints)

    def clean_templates(self) -> object:
        text = self.cleaned_data.get("templates", "").strip()
        if not text:
            return None
        try:
            return jsonsafe.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
        except jsonsafe.JSONInputError as exc:  # nested too deeply, a NUL character, a number beyond conversion
            raise forms.ValidationError(f"JSON refused: {exc}") from None

    def judge_settings(self) -> tuple[str, dict[str, object]]:
        """The chosen endpoint's name and the run's settings (``survey.judge_endpoints.RESEARCHER_SETTINGS``), unset
        fields left out."""
        data = self.cleaned_data
        endpoint, _, model = str(data["judge"]).partition(JUDGE_CHOICE_SEPARATOR)
        keys = ("temperature", "max_tokens", "timeout", "retries", "seed", "concurrency", "name")
        settings = {key: data.get(key) for key in keys if data.get(key) not in (None, "")}
        if model:
            settings["model"] = model
        else:  # a local model: its own names for the two settings that differ, no HTTP ones
            settings = {key: value for key, value in settings.items() if key in ("temperature", "seed", "name")}
            if data.get("max_tokens"):
                settings["max_new_tokens"] = data["max_tokens"]
        return endpoint, settings


#: between an endpoint's name (a slug) and a model name in the judge field's values
JUDGE_CHOICE_SEPARATOR = "|"


def judge_choices(endpoints: Sequence[JudgeEndpoint]) -> list[tuple[str, str]]:
    """One choice per (endpoint, model) of an OpenAI-compatible endpoint and one per local-model endpoint."""
    choices: list[tuple[str, str]] = []
    for endpoint in endpoints:
        note = f" ({endpoint.description})" if endpoint.description else ""
        if endpoint.kind == JudgeEndpoint.Kind.OPENAI:
            choices += [(f"{endpoint.name}{JUDGE_CHOICE_SEPARATOR}{model}", f"{endpoint.name}: {model}{note}")
                        for model in endpoint.model_names]
        else:
            choices.append((endpoint.name, f"{endpoint.name}: local model{note}"))
    return choices


class JudgmentFileForm(forms.Form):
    """Import judgments made elsewhere as file-judge runs (``survey.judge_runs.judge_run_import``)."""

    file = LimitedFileField(help_text="A judgment CSV or JSON Lines file (e.g. from python -m metaeval judge); a "
                            "large one is imported in the background, on a page that follows it")
