"""Prompt templates: defaults, rendering in the shown order, user files, placeholder checks, the hash."""
from __future__ import annotations

import json

import pytest

from metaeval.core.judges.cases import JudgeCase
from metaeval.core.judges.prompts import (
    CRITERIA,
    DEFAULT_TEMPLATES,
    Template,
    TemplateError,
    check_templates,
    format_examples,
    load_templates,
    render,
    templates_sha256,
)

CASE = JudgeCase("c1", "x", "y", "text of x {braces}", "text of y", "the headline", ("past one", "past two"))


def test_defaults_cover_the_criteria_and_ask_for_one_letter():
    check_templates(DEFAULT_TEMPLATES, CRITERIA)
    assert set(DEFAULT_TEMPLATES) == set(CRITERIA)
    for criterion in CRITERIA:
        user = render(DEFAULT_TEMPLATES[criterion], CASE, "model_a")[-1]["content"]
        assert "Text A:\ntext of x {braces}" in user and "Text B:\ntext of y" in user
        assert "exactly one letter on the first line" in user
    assert "the headline" in render(DEFAULT_TEMPLATES["relevance"], CASE, "model_a")[1]["content"]
    assert "the headline" not in render(DEFAULT_TEMPLATES["quality"], CASE, "model_a")[1]["content"]
    assert "1. past one\n2. past two" in render(DEFAULT_TEMPLATES["personalization"], CASE, "model_a")[1]["content"]


def test_render_follows_the_shown_order():
    messages = render(DEFAULT_TEMPLATES["quality"], CASE, "model_b")
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert user.index("Text A:\ntext of y") < user.index("Text B:\ntext of x")
    with pytest.raises(ValueError):
        render(DEFAULT_TEMPLATES["quality"], CASE, "a")


def test_examples_list():
    assert format_examples([" a ", "b"]) == "1. a\n2. b"
    assert format_examples([]) == "(none)"


def test_template_file_replaces_the_defaults(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"quality": {"system": "", "user": "{{x}} 1={first} 2={second}"}}), encoding="utf-8")
    templates = load_templates(path)
    assert render(templates["quality"], CASE, "model_a") == [
        {"role": "user", "content": "{x} 1=text of x {braces} 2=text of y"}]
    check_templates(templates, ["quality"])
    with pytest.raises(TemplateError, match="no template for the criteria relevance, personalization"):
        check_templates(templates, CRITERIA)


@pytest.mark.parametrize(("user", "message"), [
    ("{first} {second} {reader}", r"unknown placeholder \{reader\}"),
    ("{first} {second} {context!r}", "conversion or format spec"),
    ("{first}", r"\{second\} is not used"),
    ("{first} {second} {", "template quality.user"),
])
def test_bad_placeholders(tmp_path, user, message):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"quality": {"system": "s", "user": user}}), encoding="utf-8")
    with pytest.raises(TemplateError, match=message):
        load_templates(path)


def test_bad_files(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(TemplateError, match=r"t.json:1: invalid JSON"):
        load_templates(path)
    path.write_text(json.dumps({"quality": {"user": "{first}{second}"}}), encoding="utf-8")
    with pytest.raises(TemplateError, match='"system" and "user"'):
        load_templates(path)


def test_hash_is_canonical_and_sensitive():
    one = {"a": Template("s", "{first}{second}"), "b": Template("t", "u {first}{second}")}
    two = {"b": Template("t", "u {first}{second}"), "a": Template("s", "{first}{second}")}
    assert templates_sha256(one) == templates_sha256(two)
    assert len(templates_sha256(one)) == 64
    assert templates_sha256(one) != templates_sha256({**one, "a": Template("s ", "{first}{second}")})
