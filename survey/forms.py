"""Participant forms (ratings are validated in services, since their field names are per assignment)."""
from django import forms

from survey.models import Participant


class ConsentForm(forms.Form):
    consent = forms.BooleanField(
        required=True,
        label="I have read the information above and agree to take part.",
        error_messages={"required": "Please tick the consent box to continue."},
    )
    external_id = forms.CharField(required=False, max_length=200, widget=forms.HiddenInput)
    external_source = forms.CharField(required=False, max_length=50, widget=forms.HiddenInput)


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
