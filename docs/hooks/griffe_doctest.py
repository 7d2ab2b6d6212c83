"""Griffe extension (mkdocs.yml, mkdocstrings' ``extensions``): a docstring's doctest examples (``>>>`` lines, their
``...`` continuations and the expected output up to a blank line) become ``pycon`` code blocks, so the Python API
page shows them as code instead of reading ``[...]`` in an expected output as a Markdown link."""
from __future__ import annotations

from typing import Any

import griffe

__all__ = ["DoctestFences", "fence_doctests"]


def fence_doctests(text: str) -> str:
    """``text`` with every run of doctest lines (from a ``>>>`` line to the next blank line) fenced as ``pycon``;
    text already inside a fence is left alone."""
    out: list[str] = []
    in_fence = in_doctest = False
    indent = 0
    for line in text.splitlines():
        stripped = line.strip()
        if in_doctest and not stripped:
            out += ["```", line]
            in_doctest = False
            continue
        if not in_doctest and stripped.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and not in_doctest and stripped.startswith(">>>"):
            out.append("```pycon")
            in_doctest = True
            indent = len(line) - len(line.lstrip())
        if in_doctest:  # the block's own indentation off, the output's kept
            out.append(line[indent:] if not line[:indent].strip() else stripped)
        else:
            out.append(line)
    if in_doctest:
        out.append("```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
