"""Participant forms (ratings are validated in services, since their field names are per assignment)."""
from django import forms

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
