from __future__ import annotations

import pytest

from tests.redis_server import RedisServer


@pytest.fixture
def redis_server():
    """A fresh redis-server per test, on a free port; `.stop()` / `.start()` it for fault tests."""
    server = RedisServer()
    server.start()
    yield server
    server.stop()
