"""The one way the CLI tests call ``python -m metaeval``: in process, stdout and stderr captured."""
from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from metaeval.cli import main


def run(*argv: str) -> tuple[int, str, str]:
    """``main(argv)``'s exit status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()
