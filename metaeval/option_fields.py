"""Form and serializer fields built from :class:`~metaeval.core.options.Option` (the run form and the API accept
exactly what the command line accepts; :meth:`Option.check` validates all three)."""
from __future__ import annotations

from typing import Any

from django import forms
from drf_spectacular.drainage import set_override
from rest_framework import serializers

from metaeval.core.options import Option, OptionError


def _checked(option: Option, value: object) -> Any:
    try:
        return option.check(value)
    except OptionError as exc:
        raise forms.ValidationError(str(exc)) from None


class OptionFormField(forms.Field):
    """A text input checked by ``option`` (numbers, words or comma-separated lists, as on the command line)."""

    def __init__(self, option: Option, **kwargs: Any) -> None:
        self.option = option
        kwargs.setdefault("label", option.name.replace("_", " ").capitalize())
        super().__init__(**kwargs)

    def to_python(self, value: object) -> Any:
        if value in self.empty_values:
            return None
        return _checked(self.option, value)

    def prepare_value(self, value: object) -> object:
        if isinstance(value, (list, tuple)):
            return ",".join(str(item) for item in value)
        return value


def form_field(option: Option, **kwargs: Any) -> forms.Field:
    """A choice field for an option with choices, else an :class:`OptionFormField`; the help text says the
    allowed values and the default (``default=`` overrides the option's in the text)."""
    kwargs.setdefault("help_text", option.describe(kwargs.pop("default", None)))
    if option.choices:
        kwargs.setdefault("initial", option.default)
        return forms.ChoiceField(choices=[(word, word) for word in option.choices], **kwargs)
    return OptionFormField(option, **kwargs)


class OptionSerializerField(serializers.Field):
    """A JSON value (number, word, boolean or list) checked by ``option``."""

    def __init__(self, option: Option, **kwargs: Any) -> None:
        self.option = option
        kwargs.setdefault("help_text", option.describe())
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)
        set_override(self, "field", json_schema(option))

    def to_internal_value(self, data: object) -> Any:
        try:
            return self.option.check(data)
        except OptionError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def to_representation(self, value: object) -> object:
        return list(value) if isinstance(value, tuple) else value


def json_schema(option: Option) -> dict[str, Any]:
    """The OpenAPI schema of one value of ``option`` (an array of them when ``many``)."""
    if option.choices:
        one: dict[str, Any] = {"type": "string", "enum": list(option.choices)}
    elif option.kind is bool:
        one = {"type": "boolean"}
    else:
        one = {"type": "integer" if option.kind is int else "number"}
        if option.low is not None:
            one["minimum"] = option.low
        if option.high is not None:
            one["maximum"] = option.high
    return {"type": "array", "items": one, "minItems": 1} if option.many else one
