"""metaeval.core.measures.cache: the SQLite and PostgreSQL backends store and return the same bits under the same keys.

The PostgreSQL tests use the ``pg_cache_url`` fixture (tests/conftest.py): ``METAEVAL_TEST_CACHE_URL`` (default: the
local server, database ``postgres``), each in a schema of its own that is dropped afterwards.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from metaeval.core.measures.cache import DistanceCache, PostgresDistanceCache, open_cache, pair_digests, text_digest

MEASURE = '{"name":"m"}'


def values_bits(values: np.ndarray) -> list[str]:
    return [float(value).hex() for value in values]


def test_pair_digests_hash_each_text_once_and_order_matters():
    digests = pair_digests([("a", "b"), ("b", "a"), ("a", "b")])
    assert digests[0] == digests[2] != digests[1]
    import hashlib

    assert digests[0] == hashlib.blake2b(text_digest("a") + text_digest("b"), digest_size=16).digest()


def test_keys_share_the_measure_prefix_and_has_measure_sees_only_its_own(tmp_path):
    digests = pair_digests([("a", "b"), ("c", "d")])
    keys = DistanceCache.keys(MEASURE, digests)
    assert all(key[:8] == DistanceCache.measure_prefix(MEASURE) and len(key) == 24 for key in keys)
    with DistanceCache(tmp_path) as cache:
        assert not cache.has_measure(MEASURE)
        cache.put(keys, [0.25, math.nan])
        assert cache.has_measure(MEASURE) and not cache.has_measure('{"name":"other"}')
        # a prefix of all 0xff bytes has no upper bound: the range query still works
        top = b"\xff" * 8 + digests[0]
        cache.put([top], [1.0])
        assert DistanceCache._after(b"\xff" * 8) is None
        assert DistanceCache._after(b"\x00\xff") == b"\x01\x00"


def round_trip(cache: DistanceCache) -> None:
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.random(2500), [math.nan, 0.0, -0.0, 1e-300, 1 - 2**-53, math.inf]])
    keys = DistanceCache.keys(MEASURE, pair_digests([(f"a{i}", "b") for i in range(len(values))]))
    cache.put(keys, values.tolist())
    got, found = cache.get(keys + [b"\x00" * 24])
    assert found.tolist() == [True] * len(values) + [False]
    assert values_bits(got[:-1]) == values_bits(values + 0.0)  # -0.0 comes back as 0.0 from both backends
    assert math.isnan(got[-1])
    assert cache.count() == len(values)
    # a second put of the same keys (another worker's identical values) changes nothing
    cache.put(keys[:10], values[:10].tolist())
    assert cache.count() == len(values)
    cache.put_vectors([(b"k1", b"\x00\x01"), (b"k2", b"")])
    assert cache.get_vectors([b"k1", b"k2", b"k3"]) == {b"k1": b"\x00\x01", b"k2": b""}


def test_sqlite_backend_round_trips_every_bit(tmp_path):
    with DistanceCache(tmp_path) as cache:
        round_trip(cache)
        assert cache.describe().startswith("sqlite:")


def test_postgres_backend_round_trips_every_bit(pg_cache_url):
    with open_cache(pg_cache_url) as cache:
        assert isinstance(cache, PostgresDistanceCache)
        round_trip(cache)
        assert not cache.has_measure('{"name":"other"}') and cache.has_measure(MEASURE)


def test_postgres_cache_is_shared_between_connections(pg_cache_url):
    """Two workers (two connections, as on two machines) see each other's distances."""
    keys = DistanceCache.keys(MEASURE, pair_digests([("x", "y")]))
    with open_cache(pg_cache_url) as first, open_cache(pg_cache_url) as second:
        first.put(keys, [0.125])
        values, found = second.get(keys)
        assert found.all() and values[0] == 0.125


def test_open_cache_chooses_the_backend(tmp_path, monkeypatch):
    monkeypatch.delenv("METAEVAL_CACHE_URL", raising=False)
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(tmp_path / "dir"))
    with open_cache() as cache:
        assert type(cache) is DistanceCache and cache.path == tmp_path / "dir" / "distances.sqlite3"
    with open_cache(tmp_path / "other") as cache:
        assert cache.path == tmp_path / "other" / "distances.sqlite3"


def test_an_unreachable_postgres_cache_says_where_without_the_password():
    with pytest.raises(RuntimeError) as caught:
        open_cache("postgresql://worker:s3cret@127.0.0.1:1/nowhere?connect_timeout=2")
    message = str(caught.value)
    assert "METAEVAL_CACHE_URL" in message and "127.0.0.1:1/nowhere" in message and "s3cret" not in message


def test_put_later_writes_on_a_thread_and_flush_waits_for_it(tmp_path, monkeypatch):
    keys = DistanceCache.keys(MEASURE, pair_digests([(f"t{i}", "u") for i in range(5000)]))
    with DistanceCache(tmp_path) as cache:
        cache.put_later(keys, [i / 7 for i in range(5000)])
        cache.flush()
        values, found = cache.get(keys)
        assert found.all() and values[6] == 6 / 7
        import metaeval.core.measures.cache as cache_module

        def unwritable(*args, **kwargs):
            raise OSError("disk full")

        monkeypatch.setattr(cache_module.sqlite3, "connect", unwritable)  # the writer thread's own connection
        cache.put_later(keys[:1], [0.0])
        with pytest.raises(OSError, match="disk full"):  # reported by flush, not lost with the thread
            cache.flush()
        cache.flush()  # and only once


def test_close_waits_for_a_pending_write(tmp_path):
    keys = DistanceCache.keys(MEASURE, pair_digests([(f"t{i}", "u") for i in range(3000)]))
    with DistanceCache(tmp_path) as cache:
        cache.put_later(keys, [0.5] * 3000)
    with DistanceCache(tmp_path) as reopened:
        assert reopened.count() == 3000


def test_a_put_is_one_batch_row_and_a_later_put_replaces_a_value(tmp_path):
    keys = DistanceCache.keys(MEASURE, pair_digests([(f"p{i}", "q") for i in range(300)]))
    with DistanceCache(tmp_path) as cache:
        cache.put(keys, [0.5] * 300)
        assert cache._db.execute("SELECT COUNT(*) FROM distance_batch").fetchone() == (1,)
        assert cache._db.execute("SELECT COUNT(*) FROM distance").fetchone() == (0,)
        cache.put(keys[:2], [0.25, math.nan])  # INSERT OR REPLACE: the newer value wins
        values, found = cache.get(keys)
        assert found.all() and values[0] == 0.25 and math.isnan(values[1]) and (values[2:] == 0.5).all()
        assert cache.count() == 300


def test_more_than_max_batches_are_merged_keeping_the_newest_values(tmp_path):
    from metaeval.core.measures.cache import MAX_BATCHES

    keys = DistanceCache.keys(MEASURE, pair_digests([(f"m{i}", "n") for i in range(50)]))
    with DistanceCache(tmp_path) as cache:
        for round_ in range(MAX_BATCHES + 1):  # each put: keys round_ .. round_+9 get the value round_
            cache.put(keys[round_ : round_ + 10], [float(round_)] * 10)
        assert cache._db.execute("SELECT COUNT(*) FROM distance_batch").fetchone() == (1,)
        values, found = cache.get(keys)
        last = MAX_BATCHES + 10
        assert found[:last].all() and not found[last:].any()
        # key i was last written by the put of round min(i, MAX_BATCHES)
        assert values[:last].tolist() == [float(min(i, MAX_BATCHES)) for i in range(last)]
        assert cache.count() == last


def test_digests_ending_in_zero_bytes_and_several_measures_in_one_put(tmp_path):
    """Digests compare as whole 16-byte strings (numpy's S16 drops trailing NULs when it makes bytes)."""
    prefix_a, prefix_b = DistanceCache.measure_prefix(MEASURE), DistanceCache.measure_prefix('{"name":"b"}')
    digests = [b"\x01" * 15 + b"\x00", b"\x01" * 15 + b"\x02", b"\x01" * 14 + b"\x00\x00", b"\x00" * 16]
    keys = [prefix_a + digest for digest in digests] + [prefix_b + digests[0]]
    with DistanceCache(tmp_path) as cache:
        cache.put(keys, [0.1, 0.2, 0.3, 0.4, 0.5])
        values, found = cache.get(keys + [prefix_a + b"\x01" * 14 + b"\x00\x01", prefix_b + digests[1]])
        assert found.tolist() == [True] * 5 + [False, False]
        assert values[:5].tolist() == [0.1, 0.2, 0.3, 0.4, 0.5]
        assert cache.count() == 5


def test_distances_stored_one_per_row_by_an_older_version_are_still_read(tmp_path):
    keys = DistanceCache.keys(MEASURE, pair_digests([("old", "x"), ("new", "x"), ("none", "x")]))
    with DistanceCache(tmp_path) as cache:
        with cache._db:
            cache._db.execute("INSERT INTO distance (key, value) VALUES (?, ?)", (keys[0], 0.75))
        assert cache.has_measure(MEASURE)
        cache.put(keys[1:2], [0.125])
        values, found = cache.get(keys)
        assert found.tolist() == [True, True, False] and values[:2].tolist() == [0.75, 0.125]
        assert cache.count() == 2


def test_bad_keys_or_values_are_refused(tmp_path):
    with DistanceCache(tmp_path) as cache:
        with pytest.raises(ValueError, match="24 bytes"):
            cache.put([b"short"], [0.1])
        with pytest.raises(ValueError, match="1 keys but 2 values"):
            cache.put(DistanceCache.keys(MEASURE, pair_digests([("a", "b")])), [0.1, 0.2])
        assert cache.count() == 0
