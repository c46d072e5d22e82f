"""The Wire (one pipelined connection per client, for the coalesced
scripts) on a real Redis: callers get their own replies in order, an error
reply fails only its caller, a Redis that stops answering times out and one
that restarts is reconnected to, credentials and the database are the URL's,
and all of it on uvloop too (the services' loop). And its pub/sub
connection (the feeds'): pushes in order, a backlog left in Redis, a loss
told after what was read."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import time
from pathlib import Path

import pytest
import uvloop
from redis.exceptions import AuthenticationError, NoScriptError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.core.store import connect
from services.core.wire import Wire
from tools.redis_server import RedisServer


def wire_of(client: object) -> Wire:
    wire = getattr(client, "wire", None)
    assert isinstance(wire, Wire)
    return wire


async def test_concurrent_callers_get_their_own_replies_and_an_error_fails_only_its_own(
    redis_server: RedisServer,
) -> None:
    client = connect(redis_server.url, timeout=2.0)
    try:
        wire, key = wire_of(client), f"w:{secrets.token_hex(4)}"
        replies = await asyncio.gather(
            *(wire.execute([("INCR", key), ("GET", key)]) for _ in range(20)),
            wire.execute([("INCR", key), ("HSET", key, "f", 1), ("EVALSHA", "0" * 40, 0)]),
        )
        *counted, failing = replies
        assert [first for first, _ in counted] == list(range(1, 21))  # in the order they were sent
        assert all(got == str(n).encode() for n, got in counted)
        assert failing[0] == 21
        assert isinstance(failing[1], ResponseError) and "WRONGTYPE" in str(failing[1])
        assert isinstance(failing[2], NoScriptError)  # redis-py's own error classes
        assert await wire.execute([("GET", key)]) == [b"21"]
    finally:
        await client.aclose()


async def test_a_redis_that_stops_answering_times_out_and_its_return_is_reconnected_to(
    tmp_path: Path,
) -> None:
    server = RedisServer(tmp_path).start()
    client = connect(server.url, timeout=0.3)
    try:
        wire, key = wire_of(client), f"w:{secrets.token_hex(4)}"
        assert await wire.execute([("SET", key, "a")]) == [b"OK"]
        assert server.process is not None
        os.kill(server.process.pid, signal.SIGSTOP)
        started = time.monotonic()
        try:
            with pytest.raises(RedisTimeoutError):
                await wire.execute([("GET", key)])
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        # Four tries (the client's Retry: three again), each given 0.3 s.
        assert 1.2 <= time.monotonic() - started < 5
        assert await wire.execute([("GET", key)]) == [b"a"]
    finally:
        await client.aclose()
        server.stop()


async def test_a_restarted_redis_is_reconnected_to_without_the_caller_seeing_it(tmp_path: Path) -> None:
    server = RedisServer(tmp_path).start(persistent=True)
    client = connect(server.url, timeout=2.0)
    try:
        wire, key = wire_of(client), f"w:{secrets.token_hex(4)}"
        assert await wire.execute([("SET", key, "kept")]) == [b"OK"]
        server.stop()
        server.start(persistent=True)
        assert await wire.execute([("GET", key)]) == [b"kept"]
    finally:
        await client.aclose()
        server.stop()


async def test_the_urls_password_and_database_are_used_and_a_wrong_password_refused(
    tmp_path: Path,
) -> None:
    password = secrets.token_hex(8)
    server = RedisServer(tmp_path, extra=("--requirepass", password)).start()
    url = f"redis://:{password}@127.0.0.1:{server.port}/3"
    client, zero = connect(url, timeout=2.0), connect(url.removesuffix("/3") + "/0", timeout=2.0)
    wrong = connect(url.replace(password, "nope"), timeout=0.5)
    try:
        key = f"w:{secrets.token_hex(4)}"
        assert await wire_of(client).execute([("SET", key, "in 3")]) == [b"OK"]
        assert await client.get(key) == b"in 3"  # redis-py, on the URL's database
        assert await zero.get(key) is None
        with pytest.raises(AuthenticationError):
            await wire_of(wrong).execute([("GET", key)])
    finally:
        for each in (client, zero, wrong):
            await each.aclose()
        server.stop()


async def test_a_decoding_client_gets_text(redis_server: RedisServer) -> None:
    client = connect(redis_server.url, timeout=2.0, decode=True)
    try:
        key = f"w:{secrets.token_hex(4)}"
        assert await wire_of(client).execute([("SET", key, "é"), ("GET", key)]) == ["OK", "é"]
    finally:
        await client.aclose()


async def test_a_unix_socket_url_is_the_socket_it_names(tmp_path: Path) -> None:
    socket_path = tmp_path / "redis.sock"
    server = RedisServer(tmp_path, extra=("--unixsocket", str(socket_path))).start()
    client = connect(f"unix://{socket_path}?db=2", timeout=2.0)
    over_tcp = connect(server.url.removesuffix("/0") + "/2", timeout=2.0)
    try:
        key = f"w:{secrets.token_hex(4)}"
        assert await wire_of(client).execute([("SET", key, "by the socket")]) == [b"OK"]
        assert await over_tcp.get(key) == b"by the socket"  # the same server, the URL's database
    finally:
        await client.aclose()
        await over_tcp.aclose()
        server.stop()


def test_on_uvloop_too(redis_server: RedisServer) -> None:
    """The services run on uvloop, whose transports are not asyncio's."""

    async def round_trips() -> list[list[object]]:
        client = connect(redis_server.url, timeout=2.0)
        try:
            key = f"w:{secrets.token_hex(4)}"
            return list(await asyncio.gather(*(wire_of(client).execute([("INCR", key)]) for _ in range(5))))
        finally:
            await client.aclose()

    assert sorted(uvloop.run(round_trips())) == [[1], [2], [3], [4], [5]]


async def test_a_subscriber_gets_every_push_in_order_and_holds_a_backlog_in_redis(
    redis_server: RedisServer,
) -> None:
    """Confirmations, messages and pongs come as RESP2 sends them, in order;
    unread, the socket stops being read past the inbox's high mark (the rest
    waits in Redis) and every message still comes, in order, once read."""
    client = connect(redis_server.url, timeout=2.0)
    subscriber = await wire_of(client).subscriber()
    try:
        channel = f"c:{secrets.token_hex(4)}".encode()
        assert await subscriber.get(0.05) is None  # nothing yet
        subscriber.push("PING")  # subscribed to nothing: a plain +PONG, given as a push
        assert await subscriber.get(2.0) == [b"pong", b""]
        subscriber.push("SUBSCRIBE", channel)
        assert await subscriber.get(2.0) == [b"subscribe", channel, 1]
        count = 3_000
        publish = (
            "for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do redis.call('PUBLISH', KEYS[1], ARGV[3] .. i) end"
        )
        pad = "x" * 200  # 600 KB in all: more than one read of the socket
        for start in range(0, count, 500):
            await client.eval(publish, 1, channel, start, start + 499, pad)
        await asyncio.sleep(0.2)  # the connection read what it would
        assert len(subscriber.inbox) < count  # held back: Redis keeps the rest
        got = [await subscriber.get(2.0) for _ in range(count)]
        assert got == [[b"message", channel, f"{pad}{i}".encode()] for i in range(count)]
        subscriber.push("PING")
        assert await subscriber.get(2.0) == [b"pong", b""]
    finally:
        subscriber.close()
        await client.aclose()


async def test_a_subscriber_whose_redis_goes_away_says_so_after_what_it_read(tmp_path: Path) -> None:
    server = RedisServer(tmp_path).start()
    client = connect(server.url, timeout=2.0)
    try:
        subscriber = await wire_of(client).subscriber()
        subscriber.push("SUBSCRIBE", "c")
        assert await subscriber.get(2.0) == [b"subscribe", b"c", 1]
        await client.publish("c", "last")
        server.stop()
        assert await subscriber.get(2.0) == [b"message", b"c", b"last"]  # read before the loss
        with pytest.raises(RedisConnectionError):
            await subscriber.get(2.0)
        with pytest.raises(RedisConnectionError):
            subscriber.push("PING")
    finally:
        await client.aclose()
        server.stop()
