"""Numbers on any page as the report shows them: ``{% load report_numbers %}``, then ``{{ value|number }}``
(:func:`metaeval.core.display.fmt_number`: 4 decimals, ``< 0.0001`` for a tiny value, ``–`` for a missing one)
and ``{{ value|p_value }}`` (:func:`metaeval.core.display.fmt_p`)."""
from __future__ import annotations

from django import template

from metaeval.core import display

register = template.Library()


@register.filter
def number(value: object) -> str:
    """``value`` as :func:`metaeval.core.display.fmt_number` writes it."""
    return display.fmt_number(value)


@register.filter
def p_value(value: object) -> str:
    """``value`` as :func:`metaeval.core.display.fmt_p` writes it."""
    return display.fmt_p(value)
