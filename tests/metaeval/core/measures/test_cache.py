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
