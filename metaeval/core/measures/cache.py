"""Distance cache shared by runs, so ablations and stability studies never recompute a distance.

Two backends with one interface (:func:`open_cache` picks):

* **SQLite** (:class:`DistanceCache`, the single-machine default): one file ``distances.sqlite3`` in
  ``METAEVAL_CACHE_DIR`` (default: the per-user cache directory, e.g. ``~/.cache/metaeval``); several processes
  of one machine share it (SQLite locking, WAL). Each :meth:`~DistanceCache.put` stores its distances as one
  *batch* row (table ``distance_batch``: the measure's prefix, the pairs' digests sorted and concatenated, their
  values as little-endian float64), so a PENS-size run writes 573,068 distances of a measure in one row instead
  of 573,068 B-tree inserts (2-3 s of CPU each time, issue 34); a look-up reads the measure's batches and finds
  the keys with a binary search. A newer batch wins over an older one for the same key (``INSERT OR REPLACE``
  semantics); more than :data:`MAX_BATCHES` batches of a measure are merged into one. Rows of the table
  ``distance`` (one per distance), which caches written before batches hold, are still read.
* **PostgreSQL** (:class:`PostgresDistanceCache`): ``METAEVAL_CACHE_URL=postgresql://...``, two tables
  (``metaeval_cache_distance``, ``metaeval_cache_vector``), so workers on different machines share every
  distance and vector; writes are ``ON CONFLICT DO NOTHING`` (two workers computing the same pair store the same
  number, the first one stays).

A distance is keyed by 24 bytes: 8 bytes of the BLAKE2b digest of the measure's ``cache_key`` (name, version,
mode, options), then the 16-byte BLAKE2b digest of the two texts' own digests (:func:`pair_digests`, computed once
per run for every measure), so any change to a text or an option misses, and a measure with nothing stored is
recognised by one query. NaN is stored as NULL (as NaN in a batch), -0.0 as 0.0.

Neural measures also keep one vector per *text* (InfoLM's vocabulary distribution, BERTScore's token
embeddings) in the table ``text_vector`` of the same file, keyed by the digest of the measure's text-level key
and the text's digest, so changing only the pair-level options (alpha, beta, idf, baseline) recomputes no model
forward pass. A float32 InfoLM distribution over BERT's 30,522 wordpieces takes 122 kB per text.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
from collections.abc import Sequence
from operator import itemgetter
from pathlib import Path

import numpy as np

CACHE_ENV = "METAEVAL_CACHE_DIR"
CACHE_URL_ENV = "METAEVAL_CACHE_URL"
_CHUNK = 20000
_PREFIX_BYTES = 8
_DIGEST_BYTES = 16
#: a measure's batches are merged into one when a put makes more than this many
MAX_BATCHES = 8


def default_cache_dir() -> Path:
    """``$METAEVAL_CACHE_DIR`` or the per-user cache directory for "metaeval"."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    import platformdirs

    return Path(platformdirs.user_cache_dir("metaeval"))


def text_digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def pair_digests(pairs: Sequence[tuple[str, str]]) -> list[bytes]:
    """Per pair ``(a, b)``: the 16-byte BLAKE2b digest of ``text_digest(a) + text_digest(b)`` (each text hashed
    once). With :meth:`DistanceCache.measure_prefix` it makes the pair's key."""
    digests: dict[str, bytes] = {}
    out = []
    blake2b = hashlib.blake2b
    for a, b in pairs:
        da = digests.get(a)
        if da is None:
            da = digests[a] = text_digest(a)
        db = digests.get(b)
        if db is None:
            db = digests[b] = text_digest(b)
        out.append(blake2b(da + db, digest_size=16).digest())
    return out


def open_cache(location: str | Path | None = None) -> DistanceCache:
    """The cache at ``location``: a ``postgresql://`` (or ``postgres://``) URL opens :class:`PostgresDistanceCache`,
    anything else is a folder for :class:`DistanceCache` (SQLite). ``None``: ``$METAEVAL_CACHE_URL`` when set, else
    the folder :func:`default_cache_dir` names."""
    if location is None:
        location = os.environ.get(CACHE_URL_ENV) or None
    if isinstance(location, str) and location.startswith(("postgresql://", "postgres://")):
        return PostgresDistanceCache(location)
    return DistanceCache(location)


class DistanceCache:
    """Persistent map (measure, text a, text b) -> distance in one SQLite file. Safe to share between the processes
    of one machine (SQLite locking); :class:`PostgresDistanceCache` shares it between machines."""

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "distances.sqlite3"
        self._writer: threading.Thread | None = None
        self._failed: BaseException | None = None
        self._db = sqlite3.connect(self.path, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS distance (key BLOB PRIMARY KEY, value REAL) WITHOUT ROWID")
        self._db.execute("CREATE TABLE IF NOT EXISTS distance_batch (id INTEGER PRIMARY KEY, prefix BLOB NOT NULL, "
                         "digests BLOB NOT NULL, vals BLOB NOT NULL)")
        self._db.execute("CREATE INDEX IF NOT EXISTS distance_batch_prefix ON distance_batch (prefix, id)")
        self._db.execute("CREATE TABLE IF NOT EXISTS text_vector (key BLOB PRIMARY KEY, value BLOB NOT NULL)")
        self._db.commit()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._db.close()

    def __enter__(self) -> DistanceCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> str:
        """Where the values live, in words (for logs and run records)."""
        return f"sqlite:{self.path}"

    @staticmethod
    def measure_prefix(measure_key: str) -> bytes:
        """The first 8 bytes of every key of one measure (its ``cache_key``'s digest)."""
        return hashlib.blake2b(measure_key.encode("utf-8"), digest_size=_PREFIX_BYTES).digest()

    @classmethod
    def keys(cls, measure_key: str, digests: Sequence[bytes]) -> list[bytes]:
        """One key per pair: the measure's prefix and the pair's digest (:func:`pair_digests`)."""
        prefix = cls.measure_prefix(measure_key)
        return [prefix + digest for digest in digests]

    @staticmethod
    def _after(prefix: bytes) -> bytes | None:
        """The smallest byte string above every key starting with ``prefix`` (None: no such string)."""
        value = int.from_bytes(prefix, "big") + 1
        return None if value >> (8 * len(prefix)) else value.to_bytes(len(prefix), "big")

    def has_measure(self, measure_key: str) -> bool:
        """Whether any distance of this measure is stored (one query on each table)."""
        prefix = self.measure_prefix(measure_key)
        if self._db.execute("SELECT 1 FROM distance_batch WHERE prefix = ? LIMIT 1", (prefix,)).fetchone():
            return True
        return self._has_rows(prefix)

    def _has_rows(self, prefix: bytes) -> bool:
        """Whether the table ``distance`` (one row per distance) holds any key starting with ``prefix``."""
        after = self._after(prefix)
        if after is None:
            found = self._db.execute("SELECT 1 FROM distance WHERE key >= ? LIMIT 1", (prefix,)).fetchone()
        else:
            found = self._db.execute(
                "SELECT 1 FROM distance WHERE key >= ? AND key < ? LIMIT 1", (prefix, after)
            ).fetchone()
        return found is not None

    def get(self, keys: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """``(values, found)``: values (NaN where absent or NaN) and a boolean mask of keys present."""
        values = np.full(len(keys), np.nan)
        found = np.zeros(len(keys), dtype=bool)
        for prefix, positions in _by_prefix(keys).items():
            stored, vals = _merged(self._db, prefix)
            wanted = _digests(keys, positions)
            if len(stored):
                where = np.minimum(np.searchsorted(stored, wanted), len(stored) - 1)
                hit = stored[where] == wanted
                values[positions[hit]] = vals[where[hit]]
                found[positions[hit]] = True
            if self._has_rows(prefix):  # distances stored one per row (a cache written before batches)
                rest = positions[~found[positions]]
                self._get_rows(keys, rest, values, found)
        return values, found

    def _get_rows(self, keys: Sequence[bytes], positions: np.ndarray, values: np.ndarray, found: np.ndarray) -> None:
        index = {keys[position]: position for position in positions.tolist()}
        chosen = list(index)
        for start in range(0, len(chosen), _CHUNK):
            chunk = chosen[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, value in self._db.execute(f"SELECT key, value FROM distance WHERE key IN ({marks})", chunk):
                position = index[key]
                found[position] = True
                if value is not None:
                    values[position] = value

    def put_later(self, keys: Sequence[bytes], values: Sequence[float] | np.ndarray) -> None:
        """:meth:`put` on a thread of its own (its own SQLite connection), so that a run scores while its distances
        are written; :meth:`flush` (and :meth:`close`) waits for it and raises what it raised."""
        self.flush()
        batches = _batches(keys, values)  # copies: the caller may go on with its own

        def write() -> None:
            try:
                with contextlib.closing(sqlite3.connect(self.path, timeout=60)) as db:
                    _write_batches(db, batches)
            except BaseException as exc:  # re-raised by flush()
                self._failed = exc

        self._writer = threading.Thread(target=write, name="distance-cache-writer", daemon=True)
        self._writer.start()

    def flush(self) -> None:
        """Wait for a :meth:`put_later` still writing; raise its error, if any."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.join()
        failed, self._failed = self._failed, None
        if failed is not None:
            raise failed

    def put(self, keys: Sequence[bytes], values: Sequence[float] | np.ndarray) -> None:
        """Store ``values[i]`` under ``keys[i]``: one batch row per measure prefix among the keys."""
        _write_batches(self._db, _batches(keys, values))

    def count(self) -> int:
        """The number of distinct keys stored."""
        prefixes = [prefix for prefix, in self._db.execute("SELECT DISTINCT prefix FROM distance_batch")]
        stored = [prefix + bytes(row) for prefix in prefixes  # bytes of each row: an S16 item drops trailing NULs
                  for row in _merged(self._db, prefix)[0].view(np.uint8).reshape(-1, _DIGEST_BYTES)]
        rows = [key for key, in self._db.execute("SELECT key FROM distance")]
        return len(set(stored).union(rows))

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


def _rows(keys: Sequence[bytes], values: Sequence[float] | np.ndarray) -> list[tuple[bytes, float | None]]:
    """``(key, value)`` rows sorted by key (inserted in index order), NaN as None, -0.0 as 0.0 (SQLite keeps no
    sign of zero; PostgreSQL would, so both backends store the same)."""
    array = np.asarray(values, dtype=np.float64) + 0.0
    stored: list[float | None] = array.tolist()
    for position in np.flatnonzero(np.isnan(array)).tolist():
        stored[position] = None
    rows = list(zip(keys, stored, strict=True))
    rows.sort(key=itemgetter(0))
    return rows


def _by_prefix(keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
    """The positions of ``keys`` per measure prefix (their first 8 bytes)."""
    if not keys:
        return {}
    first = keys[0][:_PREFIX_BYTES]
    if all(key.startswith(first) for key in keys):  # one measure: the usual case
        return {first: np.arange(len(keys), dtype=np.int64)}
    groups: dict[bytes, list[int]] = {}
    for position, key in enumerate(keys):
        groups.setdefault(key[:_PREFIX_BYTES], []).append(position)
    return {prefix: np.array(positions, dtype=np.int64) for prefix, positions in groups.items()}


def _digests(keys: Sequence[bytes], positions: np.ndarray) -> np.ndarray:
    """The pair digests (the bytes after the prefix) of ``keys[positions]`` as an ``S16`` array (byte order:
    numpy compares fixed-width byte strings as ``memcmp`` does, and every digest has all 16 bytes)."""
    width = _PREFIX_BYTES + _DIGEST_BYTES
    if any(len(key) != width for key in keys):
        raise ValueError(f"distance cache keys are {width} bytes (DistanceCache.keys)")
    chosen = keys if len(positions) == len(keys) else [keys[position] for position in positions.tolist()]
    raw = np.frombuffer(b"".join(chosen), dtype=np.uint8).reshape(len(chosen), width)
    return np.ascontiguousarray(raw[:, _PREFIX_BYTES:]).view(f"S{_DIGEST_BYTES}").reshape(-1)


def _latest(digests: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique digests with, for a digest given more than once, its *last* value (a later put replaces)."""
    reverse = digests[::-1]
    unique, first = np.unique(reverse, return_index=True)
    return unique, values[::-1][first]


def _batches(keys: Sequence[bytes], values: Sequence[float] | np.ndarray) -> list[tuple[bytes, bytes, bytes]]:
    """``(prefix, digests, values)`` rows for ``distance_batch``: per prefix, the digests sorted and unique (the
    last value of a repeated key), values as little-endian float64 with -0.0 as 0.0 and every NaN the same NaN."""
    array = np.asarray(values, dtype=np.float64) + 0.0
    if len(array) != len(keys):
        raise ValueError(f"{len(keys)} keys but {len(array)} values")
    array[np.isnan(array)] = np.nan
    out = []
    for prefix, positions in _by_prefix(keys).items():
        digests, vals = _latest(_digests(keys, positions), array[positions])
        out.append((prefix, digests.tobytes(), vals.astype("<f8").tobytes()))
    return out


def _write_batches(db: sqlite3.Connection, batches: list[tuple[bytes, bytes, bytes]]) -> None:
    """Insert the batch rows and merge a measure's batches into one when it has more than :data:`MAX_BATCHES`,
    in one transaction (another process reading meanwhile sees all of it or none)."""
    if not batches:
        return
    with db:
        db.execute("BEGIN IMMEDIATE")  # the merge reads and rewrites: no other writer in between
        db.executemany("INSERT INTO distance_batch (prefix, digests, vals) VALUES (?, ?, ?)", batches)
        for prefix in {prefix for prefix, _, _ in batches}:
            (stored,) = db.execute("SELECT COUNT(*) FROM distance_batch WHERE prefix = ?", (prefix,)).fetchone()
            if stored > MAX_BATCHES:
                digests, vals = _merged(db, prefix)
                db.execute("DELETE FROM distance_batch WHERE prefix = ?", (prefix,))
                db.execute("INSERT INTO distance_batch (prefix, digests, vals) VALUES (?, ?, ?)",
                           (prefix, digests.tobytes(), vals.astype("<f8").tobytes()))


def _merged(db: sqlite3.Connection, prefix: bytes) -> tuple[np.ndarray, np.ndarray]:
    """All batches of ``prefix`` as one sorted array of unique digests and their values (the newest batch's
    value where batches share a digest)."""
    digests, values = [], []
    for blob, vals in db.execute("SELECT digests, vals FROM distance_batch WHERE prefix = ? ORDER BY id", (prefix,)):
        digests.append(np.frombuffer(blob, dtype=f"S{_DIGEST_BYTES}"))
        values.append(np.frombuffer(vals, dtype="<f8").astype(np.float64))
    if not digests:
        return np.zeros(0, dtype=f"S{_DIGEST_BYTES}"), np.zeros(0)
    if len(digests) == 1:
        return digests[0], values[0]
    return _latest(np.concatenate(digests), np.concatenate(values))


class PostgresDistanceCache(DistanceCache):
    """The same map in a PostgreSQL database (``url``, e.g. ``postgresql://user@host:5432/db``), shared by workers
    on any number of machines. Tables ``metaeval_cache_distance`` and ``metaeval_cache_vector`` are created when
    missing. Values travel in binary, so a float comes back bit for bit."""

    def __init__(self, url: str) -> None:  # noqa: D107 - the class says it
        import psycopg

        self.url = url
        self.directory = Path()
        self.path = Path()
        self._writer = None
        self._failed = None
        try:
            self._pg = psycopg.connect(url, autocommit=True)
        except psycopg.OperationalError as exc:
            raise RuntimeError(f"cannot open the distance cache at {_safe(url)} ({CACHE_URL_ENV}): {exc}") from exc
        with self._pg.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(724610)")  # two workers creating the tables at once
            try:
                cursor.execute("CREATE TABLE IF NOT EXISTS metaeval_cache_distance "
                               "(key bytea PRIMARY KEY, value double precision)")
                cursor.execute("CREATE TABLE IF NOT EXISTS metaeval_cache_vector "
                               "(key bytea PRIMARY KEY, value bytea NOT NULL)")
            finally:
                cursor.execute("SELECT pg_advisory_unlock(724610)")

    def put_later(self, keys: Sequence[bytes], values: Sequence[float] | np.ndarray) -> None:
        """Written at once (a shared cache is read by other workers as soon as a shard is marked done)."""
        self.put(keys, values)

    def close(self) -> None:
        self._pg.close()

    def describe(self) -> str:
        return f"postgresql:{_safe(self.url)}"

    def has_measure(self, measure_key: str) -> bool:
        prefix = self.measure_prefix(measure_key)
        after = self._after(prefix)
        with self._pg.cursor(binary=True) as cursor:
            if after is None:
                cursor.execute("SELECT 1 FROM metaeval_cache_distance WHERE key >= %b LIMIT 1", (prefix,))
            else:
                cursor.execute("SELECT 1 FROM metaeval_cache_distance WHERE key >= %b AND key < %b LIMIT 1",
                               (prefix, after))
            return cursor.fetchone() is not None

    def get(self, keys: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
        index = {key: position for position, key in enumerate(keys)}
        values = np.full(len(keys), np.nan)
        found = np.zeros(len(keys), dtype=bool)
        with self._pg.cursor(binary=True) as cursor:
            for start in range(0, len(keys), _CHUNK):
                chunk = [bytes(key) for key in keys[start : start + _CHUNK]]
                cursor.execute("SELECT key, value FROM metaeval_cache_distance WHERE key = ANY(%b)", (chunk,))
                for key, value in cursor:
                    position = index[bytes(key)]
                    found[position] = True
                    if value is not None:
                        values[position] = value
        return values, found

    def put(self, keys: Sequence[bytes], values: Sequence[float] | np.ndarray) -> None:
        rows = _rows(keys, values)
        with self._pg.cursor(binary=True) as cursor:
            for start in range(0, len(rows), _CHUNK):
                chunk = rows[start : start + _CHUNK]
                cursor.execute(
                    "INSERT INTO metaeval_cache_distance (key, value) SELECT * FROM unnest(%b::bytea[], %b::float8[]) "
                    "ON CONFLICT (key) DO NOTHING",
                    ([key for key, _ in chunk], [value for _, value in chunk]),
                )

    def count(self) -> int:
        with self._pg.cursor() as cursor:
            cursor.execute("SELECT COUNT(*) FROM metaeval_cache_distance")
            row = cursor.fetchone()
        return int(row[0]) if row else 0

    def get_vectors(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        with self._pg.cursor(binary=True) as cursor:
            for start in range(0, len(keys), 500):
                chunk = [bytes(key) for key in keys[start : start + 500]]
                cursor.execute("SELECT key, value FROM metaeval_cache_vector WHERE key = ANY(%b)", (chunk,))
                for key, value in cursor:
                    found[bytes(key)] = bytes(value)
        return found

    def put_vectors(self, items: Sequence[tuple[bytes, bytes]]) -> None:
        with self._pg.cursor(binary=True) as cursor:
            for start in range(0, len(items), 500):
                chunk = items[start : start + 500]
                cursor.execute(
                    "INSERT INTO metaeval_cache_vector (key, value) SELECT * FROM unnest(%b::bytea[], %b::bytea[]) "
                    "ON CONFLICT (key) DO NOTHING",
                    ([key for key, _ in chunk], [value for _, value in chunk]),
                )


def _safe(url: str) -> str:
    """``url`` without its password."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        host = parts.hostname or ""
        netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit(parts._replace(netloc=netloc))
    return url
