"""Session fixtures: the real platform (see tools/stack.py); module
fixtures: a Redis of the test module's own, for unit tests of the parts that
talk to it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from services.core import keys
from services.core.store import RecordStore, connect, publish_command
from tools.redis_server import RedisServer
from tools.stack import Stack

# The product's games and the one that exists only for the tests (Nim).
TEST_PACKAGES = ("services", "tests.games")
STORE_TTL_SECONDS = 3600


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with Stack(tmp_path_factory.mktemp("stack"), packages=TEST_PACKAGES) as stack:
        yield stack


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A redis-server on a free port, for one test module."""
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
async def store(redis_server: RedisServer) -> AsyncIterator[RecordStore]:
    """The match store on the module's Redis, publishing as the services do."""
    redis = connect(redis_server.url, timeout=2.0)
    try:
        yield RecordStore(redis, keys.match, STORE_TTL_SECONDS, await publish_command(redis, cluster=False))
    finally:
        await redis.aclose()
