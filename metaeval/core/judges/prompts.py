"""Judge prompts: one chat template (system + user message) per criterion (AuPEL sec. 3.4; conventions sec. 20).

A template's text may use the placeholders ``{context}`` (Q), ``{examples}`` (U_t as a numbered list: ``1. ...``
one per line), ``{first}`` and ``{second}`` (the texts in the order shown, labelled Text A and Text B by the
template). Literal braces are written ``{{`` and ``}}``. Any other placeholder, a format spec or conversion, or a
criterion without a template is an error (:class:`TemplateError`). The default templates are our own wording of
the paper's three instructions and ask for exactly ``A`` or ``B`` on the first line. A templates file is a JSON
object ``{criterion: {"system": ..., "user": ...}}`` that replaces the defaults as a whole;
:func:`templates_sha256` fingerprints the templates a run used.
"""
from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from metaeval.core import jsonsafe
from metaeval.core.io.fileio import ImporterError, decode_bytes

from .cases import JudgeCase

__all__ = [
    "CRITERIA",
    "DEFAULT_TEMPLATES",
    "PLACEHOLDERS",
    "SENTENCE_CRITERION",
    "SENTENCE_TEMPLATES",
    "Message",
    "Template",
    "TemplateError",
    "check_templates",
    "format_examples",
    "load_templates",
    "render",
    "templates_from_json",
    "templates_from_text",
    "templates_json",
    "templates_sha256",
]

#: the AuPEL criteria, in the order the command runs them by default
CRITERIA = ("quality", "relevance", "personalization")
PLACEHOLDERS = ("context", "examples", "first", "second")

#: a chat message: ``{"role": "system" | "user", "content": ...}``
Message = dict[str, str]


class TemplateError(ImporterError):
    """A template that cannot be used (unknown placeholder, missing criterion, bad templates file)."""


@dataclass(frozen=True, slots=True)
class Template:
    """The system and user message of one criterion (placeholders as in the module docstring)."""

    system: str
    user: str


_SYSTEM = ("You judge pairs of texts for an evaluation study. You are shown two texts, Text A and Text B, and "
           "decide which one is better on a single criterion that the user states. You must pick one of them, "
           "even when they look equally good. Reply with the letter A or the letter B alone.")
_ANSWER = ("Reply with exactly one letter on the first line: A if Text A is better on this criterion, B if Text B "
           "is. Write nothing else.")

DEFAULT_TEMPLATES: dict[str, Template] = {
    "quality": Template(
        system=_SYSTEM,
        user="Criterion: writing quality. Decide which text is written better as a piece of language: which reads "
             "more smoothly, with well-formed sentences whose ideas connect into a coherent whole. Do not reward "
             "length, topic or opinions.\n\n"
             "Text A:\n{first}\n\nText B:\n{second}\n\n" + _ANSWER,
    ),
    "relevance": Template(
        system=_SYSTEM,
        user="Criterion: relevance. Both texts were written in response to the context below. Decide which text "
             "stays closer to this context and addresses it more directly. Do not judge style or fluency.\n\n"
             "Context:\n{context}\n\n"
             "Text A:\n{first}\n\nText B:\n{second}\n\n" + _ANSWER,
    ),
    "personalization": Template(
        system=_SYSTEM,
        user="Criterion: authorship. The numbered texts below were all written by the same person. Decide which "
             "of the two texts that follow that person is more likely to have written, judging by word choice, "
             "tone, sentence style and the views expressed. Do not judge quality or topic.\n\n"
             "Texts by this person:\n{examples}\n\n"
             "Text A:\n{first}\n\nText B:\n{second}\n\n" + _ANSWER,
    ),
}


#: the criterion of a sentence preference study (Zopf's one question; ``survey.models.SENTENCE_CRITERION``)
SENTENCE_CRITERION = "importance"

#: the default template of a sentence preference study: Zopf's question, which of two sentences of a topic's
#: documents matters more to the topic ({context}: the topic's name and its sentences)
SENTENCE_TEMPLATES: dict[str, Template] = {
    SENTENCE_CRITERION: Template(
        system=_SYSTEM,
        user="Criterion: importance to the topic. Both sentences below come from documents about the topic that "
             "follows. Decide which sentence holds the more important information about this topic: the one a "
             "short summary of the topic should keep. Do not reward length or style.\n\n"
             "Topic:\n{context}\n\n"
             "Text A:\n{first}\n\nText B:\n{second}\n\n" + _ANSWER,
    ),
}


def placeholders(text: str) -> list[str]:
    """The placeholder names used in ``text`` (ValueError for a malformed brace or a spec/conversion)."""
    names: list[str] = []
    for _, name, spec, conversion in string.Formatter().parse(text):
        if name is None:
            continue
        if spec or conversion:
            raise ValueError(f"{{{name}}} has a conversion or format spec; write plain {{{name}}}")
        names.append(name)
    return names


def check_templates(templates: Mapping[str, Template], criteria: Iterable[str] = CRITERIA) -> None:
    """Raise :class:`TemplateError` naming every problem: a criterion of ``criteria`` without a template, or a
    template with an unknown or malformed placeholder (or without ``{first}`` and ``{second}``)."""
    problems: list[str] = []
    missing = [criterion for criterion in criteria if criterion not in templates]
    if missing:
        problems.append(f"no template for the criteri{'a' if len(missing) > 1 else 'on'} {', '.join(missing)} "
                        f"(templates are given for: {', '.join(templates) or 'none'})")
    for criterion, template in templates.items():
        used: list[str] = []
        for part in ("system", "user"):
            try:
                names = placeholders(getattr(template, part))
            except ValueError as exc:
                problems.append(f"template {criterion}.{part}: {exc}")
                continue
            used += names
            unknown = sorted({name for name in names if name not in PLACEHOLDERS})
            if unknown:
                problems.append(f"template {criterion}.{part}: unknown placeholder "
                                f"{', '.join('{' + name + '}' for name in unknown)} "
                                f"(known: {', '.join('{' + name + '}' for name in PLACEHOLDERS)})")
        for needed in ("first", "second"):
            if needed not in used:
                problems.append(f"template {criterion}: {{{needed}}} is not used (the texts must be shown)")
    if problems:
        raise TemplateError("\n".join(problems))


def load_templates(path: str | Path) -> dict[str, Template]:
    """Templates from a JSON file ``{criterion: {"system": str, "user": str}}``, checked for placeholders (which
    criteria a run needs is checked by :func:`check_templates` with its criteria)."""
    path = Path(path)
    return templates_from_text(decode_bytes(path.read_bytes(), path.name), path.name)


def templates_from_text(text: str, file: str) -> dict[str, Template]:
    """:func:`load_templates` on a JSON text (``file`` names it in messages)."""
    try:
        document = jsonsafe.loads(text)
    except json.JSONDecodeError as exc:
        raise TemplateError(f"{file}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    except jsonsafe.JSONInputError as exc:  # nested too deeply, or a NUL character
        raise TemplateError(f"{file}:1: {exc}") from None
    return templates_from_json(document, file)


def templates_from_json(document: object, file: str = "templates") -> dict[str, Template]:
    """Templates from a parsed JSON object ``{criterion: {"system": str, "user": str}}`` (placeholders checked)."""
    if not isinstance(document, dict) or not document:
        raise TemplateError(f'{file}: expected a JSON object {{criterion: {{"system": ..., "user": ...}}}}')
    templates: dict[str, Template] = {}
    problems: list[str] = []
    for criterion, value in document.items():
        if not isinstance(value, dict) or set(value) != {"system", "user"} or not all(
                isinstance(text, str) for text in value.values()):
            problems.append(f'{file}: template "{criterion}" must be an object with exactly the string fields '
                            '"system" and "user"')
            continue
        templates[criterion] = Template(system=value["system"], user=value["user"])
    if problems:
        raise TemplateError("\n".join(problems))
    check_templates(templates, criteria=())
    return templates


def templates_json(templates: Mapping[str, Template]) -> dict[str, dict[str, str]]:
    """The templates as the JSON object :func:`templates_from_json` reads."""
    return {criterion: {"system": t.system, "user": t.user} for criterion, t in templates.items()}


def templates_sha256(templates: Mapping[str, Template]) -> str:
    """SHA-256 (hex) of the canonical JSON of the templates: keys sorted, ``(",", ":")`` separators, UTF-8."""
    canonical = json.dumps(templates_json(templates), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def format_examples(examples: Iterable[str]) -> str:
    """The reader's examples as a numbered list, ``1. text`` one per line (``(none)`` when there are none)."""
    lines = [f"{number}. {text.strip()}" for number, text in enumerate(examples, 1)]
    return "\n".join(lines) if lines else "(none)"


def render(template: Template, case: JudgeCase, shown_first: str) -> list[Message]:
    """The chat messages for ``case`` with ``shown_first``'s text as Text A (``{first}``) and the other as Text B."""
    if shown_first not in ("model_a", "model_b"):
        raise ValueError(f"shown_first must be model_a or model_b, not {shown_first!r}")
    second = "model_b" if shown_first == "model_a" else "model_a"
    values = {"context": case.context.strip(), "examples": format_examples(case.examples),
              "first": case.text_of(shown_first).strip(), "second": case.text_of(second).strip()}
    messages: list[Message] = []
    if template.system:
        messages.append({"role": "system", "content": template.system.format_map(values)})
    messages.append({"role": "user", "content": template.user.format_map(values)})
    return messages
