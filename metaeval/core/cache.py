"""On-disk distance cache shared by runs, so ablations and stability studies never recompute a distance.

One SQLite file (``distances.sqlite3``) in ``METAEVAL_CACHE_DIR`` (default: the per-user cache directory,
e.g. ``~/.cache/metaeval``). A value is keyed by a 16-byte BLAKE2b digest of the measure's ``cache_key``
(name, version, mode, options) and the two texts' own digests, so any change to a text or an option misses.
NaN is stored as NULL.

Neural measures also keep one vector per *text* (InfoLM's vocabulary distribution, BERTScore's token
embeddings) in the table ``text_vector`` of the same file, keyed by the digest of the measure's text-level key
and the text's digest, so changing only the pair-level options (alpha, beta, idf, baseline) recomputes no model
forward pass. A float32 InfoLM distribution over BERT's 30,522 wordpieces takes 122 kB per text.
"""
from __future__ import annotations

import hashlib
import math
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

CACHE_ENV = "METAEVAL_CACHE_DIR"
_CHUNK = 20000


def default_cache_dir() -> Path:
    """``$METAEVAL_CACHE_DIR`` or the per-user cache directory for "metaeval"."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    import platformdirs

    return Path(platformdirs.user_cache_dir("metaeval"))


def text_digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class DistanceCache:
    """Persistent map (measure, text a, text b) -> distance. Safe to share between processes (SQLite locking)."""

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "distances.sqlite3"
        self._db = sqlite3.connect(self.path, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS distance (key BLOB PRIMARY KEY, value REAL) WITHOUT ROWID")
        self._db.execute("CREATE TABLE IF NOT EXISTS text_vector (key BLOB PRIMARY KEY, value BLOB NOT NULL)")
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> DistanceCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def keys(measure_key: str, pairs: Sequence[tuple[bytes, bytes]]) -> list[bytes]:
        """One key per pair of text digests."""
        prefix = hashlib.blake2b(measure_key.encode("utf-8"), digest_size=16).digest()
        return [hashlib.blake2b(prefix + a + b, digest_size=16).digest() for a, b in pairs]

    def get(self, keys: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """``(values, found)``: values (NaN where absent or NaN) and a boolean mask of keys present."""
        index = {key: position for position, key in enumerate(keys)}
        values = np.full(len(keys), np.nan)
        found = np.zeros(len(keys), dtype=bool)
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, value in self._db.execute(f"SELECT key, value FROM distance WHERE key IN ({marks})", chunk):
                position = index[key]
                found[position] = True
                if value is not None:
                    values[position] = value
        return values, found

    def put(self, keys: Sequence[bytes], values: Sequence[float]) -> None:
        rows = [(key, None if math.isnan(value) else float(value)) for key, value in zip(keys, values, strict=True)]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO distance (key, value) VALUES (?, ?)", rows)

    def count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM distance").fetchone()[0]

    # -- per-text vectors (neural measures) -------------------------------------------------------------------

    @staticmethod
    def text_keys(text_key: str, digests: Sequence[bytes]) -> list[bytes]:
        """One key per text digest under a measure's text-level key."""
        prefix = hashlib.blake2b(("text:" + text_key).encode("utf-8"), digest_size=16).digest()
        return [hashlib.blake2b(prefix + digest, digest_size=16).digest() for digest in digests]

    def get_vectors(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The stored blobs of those ``keys`` that are present."""
        found: dict[bytes, bytes] = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for key, value in self._db.execute(f"SELECT key, value FROM text_vector WHERE key IN ({marks})", chunk):
                found[key] = value
        return found

    def put_vectors(self, items: Sequence[tuple[bytes, bytes]]) -> None:
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO text_vector (key, value) VALUES (?, ?)", items)
