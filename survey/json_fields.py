"""The admin's JSON fields (a reader's history, a study's scale labels and criteria) with the project's JSON limits
(:mod:`metaeval.core.jsonsafe`): a value nested too deeply or holding a NUL character is an error of its field, not
a 500 (``RecursionError`` in Python's decoder; PostgreSQL refusing the NUL)."""
from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import models
from django.forms.fields import InvalidJSONInput

from metaeval.core import jsonsafe


def _refused(field: forms.JSONField, value: object) -> jsonsafe.JSONInputError | None:
    if field.disabled or not isinstance(value, str) or value in field.empty_values:
        return None
    try:
        jsonsafe.loads(value, cls=field.decoder)
    except jsonsafe.JSONInputError as exc:
        return exc
    except json.JSONDecodeError:  # the field's own message
        return None
    return None


class SafeJSONFormField(forms.JSONField):
    """``forms.JSONField`` refusing what :func:`metaeval.core.jsonsafe.loads` refuses."""

    def to_python(self, value: Any) -> Any:
        refused = _refused(self, value)
        if refused is not None:
            raise ValidationError(f"Enter valid JSON: {refused}.", code="invalid")
        return super().to_python(value)

    def bound_data(self, data: Any, initial: Any) -> Any:
        if _refused(self, data) is not None:
            return InvalidJSONInput(data)  # shown again as typed, with the error
        return super().bound_data(data, initial)


#: a ``ModelAdmin.formfield_overrides`` giving every JSON field of the model :class:`SafeJSONFormField`
ADMIN_OVERRIDES: dict[type[models.Field], dict[str, Any]] = {models.JSONField: {"form_class": SafeJSONFormField}}
