"""Participant forms (ratings are validated in services, since their field names are per assignment)."""
import json

from django import forms

from config.uploads import LimitedFileField
from survey.models import Participant

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

    kind = forms.ChoiceField(choices=[("openai", "OpenAI-compatible endpoint"),
                                      ("transformers", "Local causal LM (transformers)")], initial="openai")
    base_url = forms.CharField(required=False, max_length=500, label="Base URL",
                               help_text="openai: e.g. https://api.openai.com/v1 or http://localhost:8000/v1")
    model = forms.CharField(required=False, max_length=200, help_text="openai: the model name sent to the endpoint")
    api_key_env = forms.CharField(
        required=False, max_length=100, label="API key variable",
        help_text="openai: the NAME of an environment variable of the workers holding the key (never the key)")
    model_path = forms.CharField(required=False, max_length=500, label="Model folder",
                                 help_text="transformers: a local folder with config.json, weights and tokenizer")
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

    def __init__(self, *args: object, criteria: list[str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        field = self.fields["criteria"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = [(name, name) for name in criteria]
        self.fields["criteria"].initial = criteria

    def clean_templates(self) -> object:
        text = self.cleaned_data.get("templates", "").strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None

    def judge_settings(self) -> dict[str, object]:
        """The settings of the chosen kind (``metaeval.core.judges.factory``), unset fields left out."""
        data = self.cleaned_data
        keys: tuple[str, ...]
        if data["kind"] == "openai":
            keys = ("base_url", "model", "api_key_env", "temperature", "max_tokens", "timeout", "retries", "seed",
                    "concurrency", "name")
        else:
            keys = ("model_path", "temperature", "seed", "name")
        settings = {key: data.get(key) for key in keys if data.get(key) not in (None, "")}
        if data["kind"] == "transformers" and data.get("max_tokens"):
            settings["max_new_tokens"] = data["max_tokens"]
        return settings


class JudgmentFileForm(forms.Form):
    """Import judgments made elsewhere as file-judge runs (``survey.judge_runs.judge_run_import``)."""

    file = LimitedFileField(help_text="A judgment CSV or JSON Lines file (e.g. from python -m metaeval judge); a "
                            "large one is imported in the background, on a page that follows it")
