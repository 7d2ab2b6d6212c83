"""A plain machine for tests of the set-up: this machine's tools without the ones the README says are optional."""
from __future__ import annotations

import os
from pathlib import Path

#: what a plain machine lacks: Debian's package manager and the npm toolchain
OPTIONAL_TOOLS = frozenset({"apt-get", "apt", "npm", "npx", "node", "nodejs"})


def path_without(folder: Path, hidden: frozenset[str] | set[str] = OPTIONAL_TOOLS) -> str:
    """A PATH (one folder, made in ``folder``) of symlinks to every tool on this PATH except ``hidden``."""
    folder.mkdir(parents=True, exist_ok=True)
    for entry_dir in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(entry_dir):
            continue
        for entry in os.scandir(entry_dir):
            link = folder / entry.name
            if entry.name not in hidden and not os.path.lexists(link) and os.access(entry.path, os.X_OK):
                link.symlink_to(entry.path)
    return str(folder)
