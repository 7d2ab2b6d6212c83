from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.metaeval.core.judges.stub_server import Stub


@pytest.fixture
def stub() -> Iterator[Stub]:
    server = Stub()
    yield server
    server.close()
