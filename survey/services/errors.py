"""The survey's errors: what a participant or researcher did that cannot be done, in words."""
from __future__ import annotations

from collections.abc import Mapping


class SurveyError(Exception):
    """A participant- or researcher-facing problem with a clear message."""


class NoQuestionnaireAvailable(SurveyError):
    pass


class AssignmentExpired(SurveyError):
    pass


class SubmissionInvalid(SurveyError):
    def __init__(self, message: str, field_errors: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.field_errors = dict(field_errors or {})
