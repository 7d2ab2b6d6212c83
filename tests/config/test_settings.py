"""config/settings.py: the test databases' names."""
from __future__ import annotations

import hashlib
import importlib


def test_postgresql_test_databases_are_named_after_the_checkout(monkeypatch):
    """Two checkouts' suites against one PostgreSQL server get different test databases (pytest-xdist then adds
    _gw0 ...); SQLite keeps its per-process file."""
    import config.settings as config_settings

    checkout = hashlib.sha256(str(config_settings.BASE_DIR).encode()).hexdigest()[:8]
    try:
        monkeypatch.setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/lab")
        reloaded = importlib.reload(config_settings)
        assert reloaded.DATABASES["default"]["TEST"] == {"NAME": f"test_lab_{checkout}"}
        monkeypatch.setenv("DATABASE_URL", "sqlite:////tmp/lab.sqlite3")
        reloaded = importlib.reload(config_settings)
        assert reloaded.DATABASES["default"]["TEST"]["NAME"].endswith(".sqlite3")
    finally:
        monkeypatch.undo()
        importlib.reload(config_settings)
