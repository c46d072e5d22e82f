"""One pipelined connection to one Redis node, for the Lua scripts that
every move and every matchmaking ticket runs (``pipelining.py``).

redis-py spends about twice a bare round trip's CPU on each command: a
connection checked out of a pool and back under a lock, the command packed
argument by argument in Python, and a task per command for its timeout. A
game service's move is one such command (its commit), so that machinery was
a fifth of the move (``tools/bench_redis_clients.py`` measures both). A :class:`Wire`
packs a batch of commands with hiredis (in C), writes them at once, and hands
each caller its reply as hiredis parses them, with redis-py's error classes
and the client's own retry policy. One connection carries every caller:
Redis answers a connection's commands in the order they came, so a queue of
waiters is all the bookkeeping it needs, and nothing waits for a connection.

A command unanswered within the client's socket timeout fails with
TimeoutError, and with it every command behind it on the connection, which
is closed (replies that come late could not be matched to their callers). A
connection lost fails its waiters with ConnectionError. Either is retried on
a new connection as redis-py retries (the client's ``Retry``), which is safe
for what runs here: every script is a compare-and-set.

It speaks to one node: a Redis Cluster client keeps redis-py's own routing.

The feeds' pub/sub connection (``feeds.Shard``) is a :class:`Subscriber`
opened on the same settings: what Redis pushes, parsed by hiredis as it
comes and taken in order by one reader, at about a fifth of the CPU redis-py's
``PubSub.get_message`` spent on each message.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar, cast

import hiredis
from redis._parsers.base import BaseParser
from redis.asyncio.connection import ConnectionPool, SSLConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

Command = Sequence[bytes | str | int | float]
_Open = TypeVar("_Open", bound="_Connection")


class _Connection(asyncio.Protocol):
    """A socket's replies matched, in order, to the futures waiting for them."""

    def __init__(self, address: str, encoding: str | None) -> None:
        self.address = address
        self.reader = hiredis.Reader(encoding=encoding) if encoding else hiredis.Reader()
        self.waiting: deque[tuple[asyncio.Future[Any], float]] = deque()
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)

    def send(self, data: bytes, count: int, timeout: float) -> list[asyncio.Future[Any]]:
        assert self.transport is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        futures = [loop.create_future() for _ in range(count)]
        self.waiting.extend((future, deadline) for future in futures)
        self.transport.write(data)
        if self._timer is None:
            self._timer = loop.call_at(deadline, self._expire)
        return futures

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        try:
            while (reply := self.reader.gets()) is not False:
                future, _ = self.waiting.popleft()
                if not future.done():  # its caller gave up; the command ran all the same
                    future.set_result(_error(reply) if isinstance(reply, hiredis.ReplyError) else reply)
        except (hiredis.ProtocolError, IndexError):  # not Redis speaking, or a reply nobody asked for
            self._fail(RedisConnectionError(f"unexpected reply from Redis at {self.address}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(RedisConnectionError(f"connection to Redis at {self.address} lost"))

    def close(self) -> None:
        self._fail(RedisConnectionError(f"connection to Redis at {self.address} closed"))

    def _expire(self) -> None:
        """One timer per connection, not one per command: due at the oldest
        waiter's deadline, and then again at the next one's."""
        self._timer = None
        if not self.waiting or self.closed:
            return
        loop = asyncio.get_running_loop()
        deadline = self.waiting[0][1]
        if deadline <= loop.time():
            self._fail(RedisTimeoutError(f"Timeout reading from Redis at {self.address}"))
        else:
            self._timer = loop.call_at(deadline, self._expire)

    def _fail(self, error: Exception) -> None:
        if self.closed:
            return
        self.closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self.waiting:
            future, _ = self.waiting.popleft()
            if not future.done():
                future.set_exception(error)
        if self.transport is not None:
            self.transport.abort()


_PUSHES = frozenset(
    {b"message", b"smessage", b"subscribe", b"ssubscribe", b"unsubscribe", b"sunsubscribe", b"pong"}
)
# Pushes read but not yet taken: past this many the socket stops being read,
# so that a reader fallen behind leaves the backlog in Redis, whose output
# buffer limit for pub/sub clients then closes the connection (and the feeds
# repair from the history), as it did under redis-py.
_INBOX_HIGH, _INBOX_LOW = 1024, 256


class Subscriber(_Connection):
    """A pub/sub connection: what Redis pushes (messages, subscription
    confirmations, pongs, each as the list RESP2 sends) kept in order for
    one reader, which takes them with :meth:`get`; commands are written with
    :meth:`push` and answered by pushes. Bytes, never decoded (payloads are
    protobuf)."""

    def __init__(self, address: str) -> None:
        super().__init__(address, None)
        self.inbox: deque[list[Any]] = deque()
        self._woken: asyncio.Future[None] | None = None
        self._paused = False
        self._error: Exception | None = None

    def push(self, *command: bytes | str | int) -> None:
        if self.closed or self.transport is None:
            raise RedisConnectionError(f"connection to Redis at {self.address} lost")
        self.transport.write(_pack([command]))

    async def get(self, timeout: float) -> list[Any] | None:
        """The next push, None after ``timeout`` seconds without one; raises
        once the connection is lost and nothing read is left."""
        if not self.inbox:
            if self.closed:
                raise self._error or RedisConnectionError(f"connection to Redis at {self.address} lost")
            self._woken = asyncio.get_running_loop().create_future()
            try:
                async with asyncio.timeout(timeout):
                    await self._woken
            except TimeoutError:
                return None
            finally:
                self._woken = None
            if not self.inbox:
                return await self.get(0)  # woken by the loss: raise it
        reply = self.inbox.popleft()
        if self._paused and len(self.inbox) <= _INBOX_LOW and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return reply

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        try:
            while (reply := self.reader.gets()) is not False:
                if isinstance(reply, list) and reply and reply[0] in _PUSHES:
                    self.inbox.append(reply)
                elif self.waiting:  # the sign-in's AUTH and SELECT
                    future, _ = self.waiting.popleft()
                    if not future.done():
                        future.set_result(_error(reply) if isinstance(reply, hiredis.ReplyError) else reply)
                elif reply == b"PONG":  # a PING while subscribed to nothing
                    self.inbox.append([b"pong", b""])
                else:  # a refused SUBSCRIBE (a moved slot, an ACL): start over
                    self._fail(RedisConnectionError(f"Redis at {self.address} answered {reply!r}"))
                    return
        except hiredis.ProtocolError:
            self._fail(RedisConnectionError(f"unexpected reply from Redis at {self.address}"))
            return
        if len(self.inbox) >= _INBOX_HIGH and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def _fail(self, error: Exception) -> None:
        if not self.closed:
            self._error = error
        super()._fail(error)
        self._wake()

    def _wake(self) -> None:
        if self._woken is not None and not self._woken.done():
            self._woken.set_result(None)


def _pack(commands: Sequence[Command]) -> bytes:
    # hiredis's stubs take a 1-tuple; it packs any number of arguments.
    return b"".join(hiredis.pack_command(tuple(command)) for command in commands)  # type: ignore[arg-type]


def _error(reply: hiredis.ReplyError) -> ResponseError:
    """An error reply as redis-py would raise it (NoScriptError, ReadOnlyError…)."""
    return BaseParser.parse_error(str(reply))  # type: ignore[no-any-return,no-untyped-call]


class Link(Generic[_Open]):
    """One connection kept open: the current one while it lasts, else a new
    one (``open_new``), the callers of one moment sharing one attempt."""

    def __init__(self, open_new: Callable[[], Awaitable[_Open]]) -> None:
        self.current: _Open | None = None
        self._open_new = open_new
        self._opening: asyncio.Future[_Open] | None = None

    async def get(self) -> _Open:
        current = self.current
        if current is not None and not current.closed:
            return current
        if self._opening is None:
            self._opening = asyncio.ensure_future(self._open())
        opening = self._opening
        try:
            return await asyncio.shield(opening)
        finally:
            if opening.done() and self._opening is opening:
                self._opening = None

    async def _open(self) -> _Open:
        self.current = await self._open_new()
        return self.current

    def close(self) -> None:
        current, self.current = self.current, None
        if current is not None:
            current.close()


class Wire:
    """Commands to one Redis node over one connection, opened when first
    needed and again after it is lost. Built from a redis-py pool's own
    settings: its address, credentials, database, TLS, timeouts, retry."""

    def __init__(self, pool: ConnectionPool) -> None:
        options = pool.connection_kwargs
        self.host: str = options.get("host", "localhost")
        self.port: int = int(options.get("port", 6379))
        self._path: str | None = options.get("path")  # a unix:// URL's socket
        self._db = int(options.get("db", 0) or 0)
        self._username: str | None = options.get("username")
        self._password: str | None = options.get("password")
        self._timeout: float = options.get("socket_timeout") or 5.0
        self._connect_timeout: float = options.get("socket_connect_timeout") or self._timeout
        self._encoding = options.get("encoding", "utf-8") if options.get("decode_responses") else None
        self._retry: Retry = options.get("retry") or Retry(NoBackoff(), 0)
        self._ssl: ssl.SSLContext | None = None
        if issubclass(pool.connection_class, SSLConnection):
            self._ssl = ssl.create_default_context(cafile=options.get("ssl_ca_certs"))
            if options.get("ssl_cert_reqs") in ("none", ssl.CERT_NONE):
                self._ssl.check_hostname = False
                self._ssl.verify_mode = ssl.CERT_NONE
        self._link = Link(lambda: self.open(lambda: _Connection(self.address, self._encoding)))

    @property
    def address(self) -> str:
        return self._path or f"{self.host}:{self.port}"

    async def execute(self, commands: Sequence[Command]) -> list[Any]:
        """Each command's reply in order, an error reply as its exception
        (not raised); raises if the connection fails, retries spent."""
        data = _pack(commands)

        async def attempt() -> list[Any]:
            connection = await self._link.get()
            return [await future for future in connection.send(data, len(commands), self._timeout)]

        return await self._retry.call_with_retry(attempt, _pass)

    async def aclose(self) -> None:
        self._link.close()

    async def subscriber(self) -> Subscriber:
        """A new connection of its own for pub/sub (its pushes are read with
        :meth:`Subscriber.get`), signed in as the commands' is."""
        return await self.open(lambda: Subscriber(self.address))

    async def open(self, protocol: Callable[[], _Open]) -> _Open:
        """A new connection speaking ``protocol``, signed in (AUTH) and on the
        client's database (SELECT)."""
        loop = asyncio.get_running_loop()
        opening = (
            loop.create_unix_connection(protocol, self._path)
            if self._path
            else loop.create_connection(
                protocol,
                self.host,
                self.port,
                ssl=self._ssl,
                server_hostname=self.host if self._ssl else None,
            )
        )
        try:
            _, connection = await asyncio.wait_for(opening, self._connect_timeout)
        except TimeoutError:
            raise RedisTimeoutError(f"Timeout connecting to Redis at {self.address}") from None
        except OSError as error:
            raise RedisConnectionError(f"Error connecting to Redis at {self.address}: {error}") from None
        hello: list[tuple[Command, type[Exception]]] = []
        if self._password:
            credentials = (self._username, self._password) if self._username else (self._password,)
            hello.append((("AUTH", *credentials), AuthenticationError))
        if self._db:
            hello.append((("SELECT", self._db), ResponseError))
        for command, refused in hello:
            (future,) = connection.send(_pack([command]), 1, self._connect_timeout)
            reply = await future
            if isinstance(reply, Exception):  # WRONGPASS parses as AuthenticationError already
                connection.close()
                raise refused(f"{command[0]!s} refused by Redis at {self.address}: {reply}")
        return connection


async def _pass(error: Exception) -> None:
    """Nothing to undo between tries: the next one opens a new connection."""
