"""The documentation site's structure, checked fast (CI builds it strictly with ``make docs``): every how-to page is in
the nav, every nav entry exists, the generated reference pages name every command and every HTTP endpoint, every
environment variable the code reads is documented, and the README stays a short front door into the site."""
from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import yaml
from django.core.management import call_command

from metaeval.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: pages that the build writes (docs/hooks/reference_pages.py), not files under docs/
GENERATED = {"reference/cli.md", "reference/http-endpoints.md"}


def hook_module(name: str) -> ModuleType:
    """A module of docs/hooks/ (standard library only), imported as MkDocs imports the hook's neighbours."""
    folder = str(DOCS / "hooks")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(name)


def nav_pages(entries: object) -> Iterator[str]:
    if isinstance(entries, str):
        yield entries
    elif isinstance(entries, list):
        for entry in entries:
            yield from nav_pages(entry)
    elif isinstance(entries, dict):
        for value in entries.values():
            yield from nav_pages(value)


def config() -> dict:
    loaded: dict = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return loaded


def test_every_guide_page_is_in_the_nav() -> None:
    nav = set(nav_pages(config()["nav"]))
    guides = sorted(path.relative_to(DOCS).as_posix() for path in (DOCS / "guide").rglob("*.md"))
    assert len(guides) >= 10
    missing = [page for page in guides if page not in nav]
    assert not missing, f"add these to mkdocs.yml's nav (How-to guides): {missing}"


def test_every_nav_entry_is_a_page_and_no_page_is_listed_twice() -> None:
    pages = [page for page in nav_pages(config()["nav"]) if not page.startswith(("http://", "https://"))]
    assert len(pages) == len(set(pages))
    for page in pages:
        assert page in GENERATED or (DOCS / page).is_file(), page
    written = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md") if "hooks" not in path.parts}
    assert written - set(pages) == set(), "every page is in the nav (the strict build refuses one that is not)"


def test_the_site_builds_offline_and_strictly() -> None:
    settings = config()
    assert settings["theme"]["font"] is False  # no Google Fonts
    assert settings["site_dir"] == "site"
    assert {"search", "mkdocstrings"} == {next(iter(p)) if isinstance(p, dict) else p for p in settings["plugins"]}
    assert all(value == "warn" for value in settings["validation"].values())  # --strict makes them errors
    assert "mkdocs build --strict" in (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "make docs" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^/site/$", (ROOT / ".gitignore").read_text(encoding="utf-8"), flags=re.MULTILINE)


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}".strip(), sub
                yield from _commands(sub, f"{prefix} {name}")


def test_the_cli_reference_has_every_command_and_option() -> None:
    page = hook_module("cli_markdown").render_markdown(build_parser())
    commands = list(_commands(build_parser()))
    assert len(commands) >= 21 and {"power hj", "simulate preference", "score"} <= {name for name, _ in commands}
    sections = dict(re.findall(r"^## ([^\n]+)\n(.*?)(?=^## |\Z)", page, flags=re.MULTILINE | re.DOTALL))
    assert set(sections) == {name for name, _ in commands}
    for name, parser in commands:
        section = sections[name]
        assert f"usage: python -m metaeval {name}" in section, name
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
                continue
            for flag in action.option_strings:
                assert f"`{flag}" in section, f"{name}: {flag}"
            if not action.option_strings:
                assert f"`{action.metavar or action.dest.upper()}`" in section, f"{name}: {action.dest}"


def test_the_http_reference_has_every_endpoint(tmp_path: Path) -> None:
    out = tmp_path / "schema.json"
    call_command("spectacular", "--format", "openapi-json", "--file", str(out))
    schema = json.loads(out.read_text(encoding="utf-8"))
    render = hook_module("openapi_markdown")
    page = render.render_markdown(schema)
    endpoints = render.endpoints(schema)
    assert ("POST", "/api/runs/") in endpoints and len(endpoints) >= 20
    for method, path in endpoints:
        assert f"## {method} `{path}`" in page, (method, path)
    for name in schema["components"]["schemas"]:
        assert f"### {name} " in page, name
    run_create = schema["components"]["schemas"]["RunCreateRequest"]["properties"]
    assert all(f"| `{field}` |" in page for field in run_create)


ENV_READ = re.compile(
    r"""(?:os\.environ\.get\(|os\.environ\[|os\.getenv\(|_env_bool\(|_env_list\()["']([A-Z][A-Z0-9_]*)["']""")
ENV_CONSTANT = re.compile(r"""^[A-Z_]+_ENV\s*=\s*["']([A-Z][A-Z0-9_]*)["']""", flags=re.MULTILINE)
#: read by a library on our behalf, or by the shell (not settings of ours)
NOT_OURS = {"TERM"}


def test_every_environment_variable_is_in_the_configuration_page() -> None:
    read: set[str] = {"DATABASE_URL"}  # dj_database_url reads it
    for folder in ("config", "metaeval", "survey", "api"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            read |= set(ENV_READ.findall(text)) | set(ENV_CONSTANT.findall(text))
    read -= NOT_OURS
    assert {"SECRET_KEY", "METAEVAL_CACHE_URL", "DEMO_ADMIN_PASSWORD", "JUDGE_API_KEY_ENV_PATTERN"} <= read
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]*)`",
                                (DOCS / "reference" / "configuration.md").read_text(encoding="utf-8")))
    assert read - documented == set(), "document these in docs/reference/configuration.md"


def test_the_readme_is_a_short_front_door_into_the_site() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    for words in ("make run", "make test", "make docs", "mkdocs serve", "researcher-demo-pass", "admin-demo-pass"):
        assert words in readme, words
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", readme)
    assert len(links) >= 10
    for link in links:
        assert (ROOT / link).exists(), link
