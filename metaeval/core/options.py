"""One definition of every number or word a run request carries: its type, bounds or choices, default and help.

The PerSEval hyper-parameters (:data:`metaeval.core.perseval.measure.PARAMETERS`) and the report settings
(:data:`metaeval.core.perseval.report.REPORT_OPTIONS`) are tables of :class:`Option`; the command line's flags
(``metaeval.cli``), the run form (``metaeval.views``) and the API serializer (``api.serializers``) are built from
them, and :meth:`Option.check` is the only validation: what one entry point accepts, every other accepts.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["BIGINT_MAX", "SEED_MAX", "Option", "OptionError", "check_all"]

#: the largest integer a database integer column holds (PostgreSQL's bigint; SQLite's integers): every integer option
#: is bounded by it (and by its own bounds), so no value an entry point accepts overflows a column
BIGINT_MAX = 2**63 - 1
#: the largest seed a run takes (the API, the run form, ``manage.py metaeval_report``; stored as a bigint, and a
#: report's pairwise draws add small offsets to it)
SEED_MAX = 2**62


class OptionError(ValueError):
    """A value outside its option's type, bounds or choices; ``name`` is the option's."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


@dataclass(frozen=True)
class Option:
    """``kind`` is ``float``, ``int``, ``str`` or ``bool``; ``low``/``high`` are inclusive bounds of numbers;
    ``choices`` the allowed words; ``many``: a list of such values (a comma-separated string on the command line),
    ``increasing``: a list whose values must increase strictly. ``flag`` overrides the command-line flag (default
    ``--`` + the name with dashes)."""

    name: str
    default: Any
    help: str
    kind: type = float
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    many: bool = False
    flag_name: str = ""
    increasing: bool = False

    @property
    def flag(self) -> str:
        return self.flag_name or "--" + self.name.replace("_", "-")

    def describe(self, default: object = None) -> str:
        """The help with the allowed values and the default (``default`` if given, else the option's), for every
        entry point's help text."""
        if self.choices:
            allowed = "one of " + ", ".join(self.choices)
        elif self.kind is bool:
            allowed = "true or false"
        else:
            allowed = self._a()
        if self.many:
            allowed = ("comma-separated, increasing, each " if self.increasing else "comma-separated, each ") + allowed
        value: Any = self.default if default is None else default
        shown = ",".join(_show(v) for v in value) if self.many else _show(value)
        return f"{self.help} ({allowed}; default {shown})"

    def check(self, value: object) -> Any:
        """``value`` as this option's type (a tuple when ``many``); :class:`OptionError` naming the option if it is
        not one of its values. Strings are parsed (the command line's and a form's values)."""
        if self.many:
            given = value
            if isinstance(value, str):
                value = [part for part in (piece.strip() for piece in value.split(",")) if part]
            if not isinstance(value, Iterable) or isinstance(value, Mapping) or not value:
                raise OptionError(self.name, f"{self.name} must be a non-empty list of {self._word()}s; got {value!r}")
            values = tuple(self._one(item) for item in value)
            if self.increasing and any(b <= a for a, b in zip(values, values[1:], strict=False)):
                raise OptionError(self.name, f"{self.name} must increase strictly; got {given!r}")
            return values
        return self._one(value)

    def _word(self) -> str:
        return {float: "number", int: "integer", str: "word", bool: "boolean"}[self.kind]

    def _one(self, value: object) -> Any:
        if self.kind is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lower() in ("true", "false"):
                return value.strip().lower() == "true"
            raise OptionError(self.name, f"{self.name} must be true or false; got {value!r}")
        if self.choices or self.kind is str:
            if value in self.choices or (not self.choices and isinstance(value, str)):
                return value
            raise OptionError(self.name, f"{self.name} must be one of {', '.join(self.choices)}; got {value!r}")
        number = _number(value, integer=self.kind is int)
        if number is None:
            raise OptionError(self.name, f"{self.name} must be {self._a()}; got {value!r}")
        if (self.low is not None and number < self.low) or (self.high is not None and number > self.high):
            raise OptionError(self.name, f"{self.name} must be {self._a()}; got {value!r}")
        if self.kind is int and not -BIGINT_MAX - 1 <= number <= BIGINT_MAX:
            raise OptionError(self.name, f"{self.name} must be {self._a()} of at most {len(str(BIGINT_MAX))} digits "
                                         f"(from {-BIGINT_MAX - 1} to {BIGINT_MAX}); got {value!r}")
        return number

    def _a(self) -> str:
        word = "an integer" if self.kind is int else "a finite number"
        if self.low is not None and self.high is not None:
            return f"{word} from {_show(self.low)} to {_show(self.high)}"
        if self.low is not None:
            return f"{word} >= {_show(self.low)}"
        return word


def _number(value: object, *, integer: bool) -> float | int | None:
    if isinstance(value, str):
        try:
            value = int(value) if integer else float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if integer:
        if isinstance(value, float) and not value.is_integer():
            return None
        return int(value)
    number = float(value)
    return number if math.isfinite(number) else None


def _show(value: object) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value)) if value != 0 or math.copysign(1, value) > 0 else "0"
    return str(value)


def check_all(options: Sequence[Option], values: Mapping[str, object], *, what: str) -> dict[str, Any]:
    """``values`` checked against ``options`` by name (:class:`OptionError` for an unknown name or a bad value);
    returns the converted values (only those given)."""
    by_name = {option.name: option for option in options}
    unknown = sorted(set(values) - set(by_name))
    if unknown:
        raise OptionError(unknown[0], f"unknown {what} {unknown[0]!r}; choose from {', '.join(by_name)}")
    return {name: by_name[name].check(value) for name, value in values.items()}
