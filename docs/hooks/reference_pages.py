"""MkDocs hook (mkdocs.yml ``hooks:``): the generated reference pages, built afresh on every build.

- ``reference/cli.md``: the command line, from ``metaeval.cli.build_parser()`` (:mod:`cli_markdown`);
- ``reference/http-endpoints.md``: the HTTP API, from the OpenAPI document of ``manage.py spectacular``
  (:mod:`openapi_markdown`), run in a child process so that Django's settings stay out of MkDocs' process.

Also shows the docstrings' reST roles (``:mod:`x```, ``~name``) as plain code on the API pages."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import cli_markdown
import openapi_markdown
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
ROLE = re.compile(r":(?:mod|func|class|meth|data|attr|obj|exc|py:\w+):(?=<code>)")


def openapi_document(root: Path = ROOT) -> dict[str, Any]:
    """The OpenAPI document as ``GET /api/schema/`` serves it (``manage.py spectacular`` with DEBUG on, so that no
    production secret is needed)."""
    env = {**os.environ, "DEBUG": "1"}
    env.pop("DATABASE_URL", None)  # the schema reads no database; never touch a configured one
    done = subprocess.run([sys.executable, "manage.py", "spectacular", "--format", "openapi-json"], cwd=root,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise PluginError(f"manage.py spectacular failed:\n{done.stderr.strip()}")
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def cli_page() -> str:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from metaeval.cli import build_parser

    return cli_markdown.render_markdown(build_parser())


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "reference/cli.md", content=cli_page()))
    files.append(File.generated(config, "reference/http-endpoints.md",
                                content=openapi_markdown.render_markdown(openapi_document())))
    return files


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    return ROLE.sub("", html).replace("<code>~", "<code>")
