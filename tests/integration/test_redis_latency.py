"""The clients connect() makes (every process's) record each completed Redis
round trip in rodada_redis_seconds by command, pipelines as one, and leave
out blocking reads, whose duration is a wait, and commands that failed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from redis.exceptions import ResponseError

from services.core.store import RedisClient, connect
from tools.redis_server import RedisServer


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[RedisClient]:
    server = RedisServer(tmp_path / "redis").start()
    redis = connect(server.url, timeout=5)
    try:
        yield redis
    finally:
        await redis.aclose()
        server.stop()


def counted(op: str) -> float:
    return REGISTRY.get_sample_value("rodada_redis_seconds_count", {"op": op}) or 0.0


async def test_round_trips_by_command_without_waits_or_failures(client: RedisClient) -> None:
    before = {op: counted(op) for op in ("set", "get", "pipeline", "xread", "incr")}
    await client.set("k", "1")
    assert await client.get("k") == b"1"
    pipe = client.pipeline(transaction=False)
    pipe.get("k")
    pipe.get("k")
    assert await pipe.execute() == [b"1", b"1"]
    assert await client.xread({"s": "0"}) == []  # no wait: a round trip
    assert await client.xread({"s": "$"}, block=300) == []  # waited 0.3 s for nothing
    await client.set("text", "x")
    with pytest.raises(ResponseError):
        await client.incr("text")
    after = {op: counted(op) - before[op] for op in before}
    assert after == {"set": 2, "get": 1, "pipeline": 1, "xread": 1, "incr": 0}, after
