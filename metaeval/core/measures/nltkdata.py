"""Finding NLTK's WordNet offline.

METEOR (synonym matching) and the authors' preprocessing (lemmatisation) need Princeton WordNet 3.0 as an NLTK
corpus. The NLTK downloader is not used: ``make wordnet`` (``scripts/install_wordnet.sh``) copies the dictionary
files of Debian's ``wordnet-base``/``wordnet-sense-index`` packages into ``<data dir>/corpora/wordnet/`` and
writes the ``lexnames`` file NLTK's reader needs.

The data dir is searched in this order, the first one holding ``corpora/wordnet`` (a folder, or NLTK's
``wordnet.zip``) wins:

1. every entry of the environment variable ``NLTK_DATA`` (``os.pathsep``-separated, as NLTK reads it);
2. ``<sys.prefix>/nltk_data``: with the project's virtualenv that is ``.venv/nltk_data``, where
   ``make wordnet`` installs by default;
3. NLTK's own defaults (``nltk.data.path``: ``~/nltk_data``, ``/usr/share/nltk_data``, ...).

nltk is imported inside the functions only, so importing this module stays light.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from metaeval.core.measures.base import MeasureUnavailable

#: How to provide WordNet; part of every "missing WordNet" error.
WORDNET_FIX = (
    "Fix: run `make wordnet` (or `bash scripts/install_wordnet.sh`) in the project root, which installs "
    "WordNet 3.0 from Debian's wordnet-base/wordnet-sense-index packages (with apt-get, on Debian or Ubuntu) into "
    "$NLTK_DATA if set, else .venv/nltk_data; or set NLTK_DATA to a directory containing corpora/wordnet."
)


def default_search_path() -> list[str]:
    """The NLTK data dirs to search, in order: ``$NLTK_DATA`` entries, ``<sys.prefix>/nltk_data``, NLTK's path."""
    dirs: list[str] = []
    env = os.environ.get("NLTK_DATA", "")
    dirs.extend(d for d in env.split(os.pathsep) if d)
    dirs.append(os.path.join(sys.prefix, "nltk_data"))
    import nltk.data  # lazy: nltk is heavy

    dirs.extend(p for p in nltk.data.path if isinstance(p, str))
    seen: set[str] = set()
    unique = []
    for d in dirs:
        key = os.path.abspath(os.path.expanduser(d))
        if key not in seen:
            seen.add(key)
            unique.append(d)
    return unique


def _has_wordnet(data_dir: str) -> bool:
    corpora = os.path.join(os.path.expanduser(data_dir), "corpora")
    return os.path.isfile(os.path.join(corpora, "wordnet", "lexnames")) or os.path.isfile(
        os.path.join(corpora, "wordnet.zip")
    )


def find_wordnet_dir(search: Sequence[str] | None = None) -> str | None:
    """The first data dir in ``search`` (default :func:`default_search_path`) holding WordNet, else None."""
    for data_dir in default_search_path() if search is None else search:
        if _has_wordnet(data_dir):
            return os.path.abspath(os.path.expanduser(data_dir))
    return None


def missing_wordnet_message(searched: Sequence[str]) -> str:
    where = ", ".join(str(d) for d in searched) or "(no directories)"
    return f"NLTK's WordNet corpus (corpora/wordnet) was not found; searched: {where}. {WORDNET_FIX}"


def require_wordnet(search: Sequence[str] | None = None):
    """Locate WordNet, put its data dir first on ``nltk.data.path``, load it and return the reader.

    Returns ``nltk.corpus.wordnet`` (loaded). Raises :class:`MeasureUnavailable` naming the fix when WordNet
    is missing or does not load. Cheap after the first call (a few ``stat`` calls).
    """
    searched = default_search_path() if search is None else list(search)
    data_dir = find_wordnet_dir(searched)
    if data_dir is None:
        raise MeasureUnavailable(missing_wordnet_message(searched))
    import nltk.data

    if not nltk.data.path or nltk.data.path[0] != data_dir:
        if data_dir in nltk.data.path:
            nltk.data.path.remove(data_dir)
        nltk.data.path.insert(0, data_dir)
    from nltk.corpus import wordnet

    try:
        wordnet.ensure_loaded()
    except (LookupError, OSError, ValueError, AssertionError) as exc:
        raise MeasureUnavailable(
            f"NLTK's WordNet corpus in {data_dir} does not load ({type(exc).__name__}: {exc}). {WORDNET_FIX}"
        ) from exc
    return wordnet
