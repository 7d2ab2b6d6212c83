"""LLM judges for the pairwise protocol (AuPEL sec. 3.4): cases, prompts, the order-balanced plan, answer parsing,
judges (OpenAI-compatible HTTP, local transformers) and the runner that writes judgment-table rows. No Django.
Conventions: docs/conventions.md sec. 20. Judges against people (``items``, ``agreement``, ``ppi``, ``alt_test``;
sec. 28) are imported from their modules."""
from __future__ import annotations

from .base import Judge, JudgeConfigError, JudgeError
from .cases import JudgeCase, load_cases, parse_cases
from .parse import parse_answer
from .plan import DEFAULT_RUNS, JudgeRequest, PlanError, plan
from .prompts import CRITERIA, DEFAULT_TEMPLATES, Template, TemplateError, load_templates, render, templates_sha256
from .runner import COLUMNS, JudgmentRecord, iter_judging, run_judging

__all__ = [
    "COLUMNS",
    "CRITERIA",
    "DEFAULT_RUNS",
    "DEFAULT_TEMPLATES",
    "Judge",
    "JudgeCase",
    "JudgeConfigError",
    "JudgeError",
    "JudgeRequest",
    "JudgmentRecord",
    "PlanError",
    "Template",
    "TemplateError",
    "iter_judging",
    "load_cases",
    "load_templates",
    "parse_answer",
    "parse_cases",
    "plan",
    "render",
    "run_judging",
    "templates_sha256",
]
