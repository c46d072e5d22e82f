"""Feeds: a table's history as it happens, to everyone watching, for as long
as its match lasts. The one way any process reads a history live: the
gateway's table feeds (both faces) and a game service's ``Watch`` are
listeners of a hub; nothing else reads the stream or the live channel.

Every write to a match publishes its new events (and, while someone
watches, every audience's snapshot) on the match's live channel
(``store.py``). A :class:`FeedHub` — one per process: each game service,
each gateway replica — holds one subscription per match that has listeners,
on one pub/sub connection per Redis node, and hands each message to that
match's listeners in process, each getting only the events its seat may see
and its own seat's snapshot. So Redis connections grow with the nodes, and
subscriptions with the matches being watched, never with the watchers.

The stream is the durable log: a listener first catches up from it (from
the event id it last saw), then takes the live messages, skipping what it
already has, so a resume has no gap and no duplicate. Pub/sub may drop
messages when a connection breaks; the hub then repairs every match it
follows from the stream before delivering anything newer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from rodada.common.v1 import match_pb2

from services.core import keys, tracing
from services.core.errors import Refused, unavailable
from services.core.store import RecordStore, RedisClient, parse_live
from services.core.wire import Link, Subscriber, Wire

log = logging.getLogger("rodada.feeds")

SUBSCRIBE_TIMEOUT_SECONDS = 10.0
# Listen in short waits, so housekeeping (health checks) needs no task of its own.
POLL_SECONDS = 1.0
# With nothing heard for this long a pub/sub connection is pinged, and if the
# ping's answer does not come back within the same time it is reconnected.
HEALTH_SECONDS = 15.0
# A listener further behind than this is dropped ("lagging"); it resumes from
# the history, which has everything.
MAX_PENDING = 2_000
# After a match's final event, how long to wait for its final snapshot on the
# live channel before reading it.
FINAL_SNAPSHOT_WAIT_SECONDS = 2.0
_BATCH = 500


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who a feed is for: a seat, or a spectator (``seat`` None). A user who
    is not seated yet (a table's feed before its start) gets a seat from the
    match's first snapshot that seats them."""

    user_id: str | None
    seat: int | None = None
    host: bool = False

    def sees(self, event: match_pb2.MatchEvent) -> bool:
        if event.host_only:
            return self.host
        if event.spectators_only:
            return self.seat is None
        return not event.audience or (self.seat is not None and self.seat in event.audience)


class Item:
    """One message a feed delivers, shared by every listener it goes to, so
    a rendering (the gateway's JSON) is made once however many receive it."""

    __slots__ = ("message", "rendered")

    def __init__(self, message: Message) -> None:
        self.message = message
        self.rendered: Any = None

    def render(self, renderer: Callable[[Message], Any]) -> Any:
        if self.rendered is None:
            self.rendered = renderer(self.message)
        return self.rendered


class Listener:
    """One watcher of a match, fed by push: the hub hands each item to
    ``sink`` (which must not block: a WebSocket queues it and flushes in a
    task of its own only while there is something to send), after applying
    the watcher's audience, dropping what it already had and, once the match
    is over, ending it with ``None``. While it catches up from the history,
    live items wait in ``early``. An idle listener is this object alone: no
    task, no buffer."""

    __slots__ = (
        "current",
        "early",
        "ended",
        "position",
        "seat",
        "sink",
        "stop",
        "timer",
        "version",
        "viewer",
    )

    def __init__(
        self,
        viewer: Viewer,
        current: Callable[[], Awaitable[Message]],
        sink: Callable[[Item | None], None],
        stop: Callable[[Refused], None],
    ) -> None:
        self.viewer = viewer
        self.seat = viewer.seat
        self.current = current
        self.sink = sink  # None ends the feed: the match is over
        self.stop = stop
        self.early: deque[Item] | None = deque()  # None once live
        self.position = 0  # the last event id handed on
        self.version = -1  # the last snapshot's version handed on
        self.ended = False
        self.timer: asyncio.TimerHandle | None = None

    def sit(self, seat: int | None) -> None:
        """The watcher's seat (None: a spectator), known from a snapshot."""
        self.seat = seat
        self.viewer = Viewer(self.viewer.user_id, seat, self.viewer.host)

    def offer(self, item: Item) -> None:
        if self.early is None:
            self.route(item)
        elif len(self.early) >= MAX_PENDING:
            self.stop(unavailable("this feed fell too far behind; resume from your last event", "lagging"))
        else:
            self.early.append(item)

    def route(self, item: Item) -> None:
        """Hand ``item`` on if the watcher should have it."""
        message = item.message
        if self.ended:
            return
        if isinstance(message, match_pb2.MatchEvent):
            if message.id <= self.position:
                return
            self.position = message.id
            if self.viewer.sees(message):
                self.sink(item)
            if message.final:
                self._await_final()
        elif isinstance(message, match_pb2.Snapshot):
            if message.version <= self.version:
                return
            self.version = message.version
            self.sink(item)
            if message.status == match_pb2.MATCH_STATUS_FINISHED:
                self.ended = True
                self.cancel()
                self.sink(None)
        else:
            self.sink(item)  # a table: the state before the start

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _await_final(self) -> None:
        """After the final event the final snapshot should follow on the live
        channel; if it does not come soon (the writer thought nobody was
        watching), read it."""
        if self.timer is not None or self.early is not None:
            return  # catching up: the state read at its end is the final one
        loop = asyncio.get_running_loop()

        async def read() -> None:
            with contextlib.suppress(Exception):
                self.route(Item(await self.current()))

        self.timer = loop.call_later(FINAL_SNAPSHOT_WAIT_SECONDS, lambda: loop.create_task(read()))


class _Match:
    """A match some listeners of this process follow."""

    __slots__ = ("last_id", "listeners", "repair", "shard", "subscribed")

    def __init__(self, shard: Shard) -> None:
        self.listeners: set[Listener] = set()
        self.shard = shard
        self.subscribed: asyncio.Future[None] | None = None
        self.last_id: int | None = None  # the newest event delivered from the live channel
        self.repair = False  # messages may have been lost: fill from the history first


class FeedHub:
    def __init__(self, redis: RedisClient, store: RecordStore) -> None:
        self.redis = redis
        self.store = store
        self._matches: dict[str, _Match] = {}
        self._shards: dict[str, Shard] = {}
        self._closing: Refused | None = None

    @property
    def sharded(self) -> bool:
        return self.store.publish == "SPUBLISH"

    @property
    def subscriptions(self) -> int:
        return len(self._matches)

    @property
    def connections(self) -> int:
        """Pub/sub connections held (one per Redis node with subscriptions)."""
        return sum(1 for shard in self._shards.values() if shard.task is not None)

    async def publish(self, match_id: str, first_event_id: int, payload: bytes) -> None:
        """A live message outside a write (snapshots for a new watcher)."""
        message = f"{first_event_id}:".encode() + payload
        if self.sharded:
            await self.redis.spublish(keys.live(match_id), message)
        else:
            await self.redis.publish(keys.live(match_id), message)

    async def open(
        self,
        match_id: str,
        after_event_id: int,
        viewer: Viewer,
        current: Callable[[], Awaitable[Message]],
        sink: Callable[[Item | None], None],
        stop: Callable[[Refused], None],
    ) -> Listener:
        """Start a watcher's feed: ``sink`` gets the visible events after
        ``after_event_id``, then the state to draw from (``current()``: the
        caller's Snapshot, or for a table not started yet whatever stands
        for it; its ``last_event_id`` says which events it covers), then every
        new visible event and the watcher's snapshot of each new version,
        and ``None`` after the match's final event and snapshot. ``stop``
        is called if the hub must end the feed (this process drains, the
        watcher lags). Let go of it with :meth:`release`."""
        if self._closing:
            raise self._closing
        listener = Listener(viewer, current, sink, stop)
        await self._join(match_id, listener)
        try:
            state = await current()
            covered = int(getattr(state, "last_event_id", 0))
            listener.position = after_event_id
            final = False
            if isinstance(state, match_pb2.Snapshot):  # the seat first: its hidden events are in the history
                listener.sit(None if state.seat < 0 else state.seat)
            # The history up to the state, then the state: a resume has no gap.
            while listener.position < covered:
                batch = await self.store.read_events(match_id, listener.position, _BATCH)
                if not batch:
                    break
                for event_id, raw in batch:
                    event = decode_event(event_id, raw)
                    final = final or event.final
                    listener.route(Item(event))
            if (
                isinstance(state, match_pb2.Snapshot)
                and final
                and state.status != match_pb2.MATCH_STATUS_FINISHED
            ):
                state = await current()  # the final write landed meanwhile
            listener.route(Item(state))
            # Live from here: what arrived meanwhile first.
            early, listener.early = listener.early or deque(), None
            for item in early:
                listener.route(item)
        except BaseException:
            self.release(match_id, listener)
            raise
        return listener

    def release(self, match_id: str, listener: Listener) -> None:
        listener.cancel()
        self._leave(match_id, listener)

    async def follow(
        self,
        match_id: str,
        after_event_id: int,
        viewer: Viewer,
        current: Callable[[], Awaitable[Message]],
    ) -> AsyncIterator[Item]:
        """The same feed as an async iterator (for gRPC streams): it ends
        after the match's final snapshot and raises Refused when the hub
        ends it."""
        queue: asyncio.Queue[Item | Refused | None] = asyncio.Queue()
        listener = await self.open(
            match_id, after_event_id, viewer, current, queue.put_nowait, queue.put_nowait
        )
        try:
            while True:
                item = await queue.get()
                if item is None:
                    return
                if isinstance(item, Refused):
                    raise item
                yield item
        finally:
            self.release(match_id, listener)

    # -- subscriptions --------------------------------------------------------------

    async def _join(self, match_id: str, listener: Listener) -> None:
        entry = self._matches.get(match_id)
        if entry is None:
            entry = self._matches[match_id] = _Match(self._shard(match_id))
        entry.listeners.add(listener)
        if entry.subscribed is None:
            entry.subscribed = asyncio.get_running_loop().create_future()
            try:
                await entry.shard.subscribe(keys.live(match_id))
            except Exception as error:
                entry.subscribed.set_exception(error)
                entry.subscribed.exception()  # retrieved: the others waiting get it too
                self._leave(match_id, listener)
                raise unavailable("live updates are unavailable; retry shortly") from error
            entry.subscribed.set_result(None)
        else:
            try:
                await asyncio.shield(entry.subscribed)
            except Exception:
                self._leave(match_id, listener)
                raise unavailable("live updates are unavailable; retry shortly") from None

    def _leave(self, match_id: str, listener: Listener) -> None:
        entry = self._matches.get(match_id)
        if entry is None:
            return
        entry.listeners.discard(listener)
        if not entry.listeners:
            del self._matches[match_id]
            if entry.subscribed is not None and entry.subscribed.done() and not entry.subscribed.exception():
                entry.shard.unsubscribe_soon(keys.live(match_id), lambda: match_id in self._matches)

    def _shard(self, match_id: str) -> Shard:
        """The pub/sub connection for a match's channel: the one Redis, or in a
        cluster the node that owns the channel's slot."""
        if isinstance(self.redis, RedisCluster):
            node = self.redis.get_node_from_key(keys.live(match_id))
            if node is None:
                raise unavailable("the Redis Cluster has no node for this match yet; retry shortly")
            name = f"{node.host}:{node.port}"
            if name not in self._shards:
                client = Redis(host=node.host, port=int(node.port), socket_keepalive=True)
                self._shards[name] = Shard(client, self.sharded, self._deliver, self._repair_all)
            return self._shards[name]
        if "" not in self._shards:
            self._shards[""] = Shard(self.redis, self.sharded, self._deliver, self._repair_all)
        return self._shards[""]

    # -- delivery ---------------------------------------------------------------------

    async def _deliver(self, channel: str, data: bytes) -> None:
        match_id = keys.match_of_live(channel)
        entry = self._matches.get(match_id)
        if entry is None:
            return
        first_id, payload = parse_live(data)
        update = match_pb2.LiveUpdate.FromString(payload)
        if entry.repair or (entry.last_id is not None and first_id > entry.last_id + 1):
            await self._fill(match_id, entry, first_id - 1)
        if update.snapshots:  # the write that starts a match seats the lobby's watchers: before its events
            self._seat_lobby(entry, update.snapshots[0])
        for offset, event in enumerate(update.events):
            event.id = first_id + offset
            self._broadcast(entry, Item(event))
        if update.events:
            entry.last_id = first_id + len(update.events) - 1
        if update.snapshots:
            # The writer built them before its write numbered the events; the
            # message's prefix has the true numbers.
            for snapshot in update.snapshots:
                snapshot.last_event_id = first_id + len(update.events) - 1
            self._hand_out(entry, update.snapshots)

    def _broadcast(self, entry: _Match, item: Item) -> None:
        for listener in list(entry.listeners):
            listener.offer(item)

    def _seat_lobby(self, entry: _Match, snapshot: match_pb2.Snapshot) -> None:
        """Listeners not seated yet (a table's feed from its lobby) take the
        seat the match gives their user."""
        seats = {s.user_id: i for i, s in enumerate(snapshot.seats) if s.user_id}
        for listener in list(entry.listeners):
            if listener.seat is None and listener.viewer.user_id in seats:
                listener.sit(seats[listener.viewer.user_id])

    def _hand_out(self, entry: _Match, snapshots: Any) -> None:
        """Each listener its own audience's snapshot (one Item per audience)."""
        by_seat = {snapshot.seat: Item(snapshot) for snapshot in snapshots}
        for listener in list(entry.listeners):
            item = by_seat.get(-1 if listener.seat is None else listener.seat)
            if item is not None:
                listener.offer(item)

    async def _fill(self, match_id: str, entry: _Match, up_to: int | None) -> None:
        """Deliver from the history what the live channel may have lost."""
        entry.repair = False
        position = entry.last_id
        if position is None:  # nothing live yet: from where the listeners are
            if not entry.listeners:
                return
            position = min(listener.position for listener in entry.listeners)
        while up_to is None or position < up_to:
            batch = await self.store.read_events(match_id, position, _BATCH)
            for event_id, raw in batch:
                if up_to is not None and event_id > up_to:
                    break
                self._broadcast(entry, Item(decode_event(event_id, raw)))
                position = event_id
            if len(batch) < _BATCH:
                break
        entry.last_id = position

    async def _repair_all(self, shard: Shard) -> None:
        """After a lost connection: every match on it may have missed messages
        — events, which the history has, and snapshots, which it has not (a
        write made while nobody was subscribed published none)."""
        for match_id, entry in list(self._matches.items()):
            if entry.shard is shard:
                entry.repair = True
                try:
                    await self._fill(match_id, entry, None)
                except RedisError:
                    entry.repair = True  # next message or reconnect tries again
                    continue
                await self._refresh(match_id, entry)

    async def _refresh(self, match_id: str, entry: _Match) -> None:
        """Each listener the current snapshot of its audience: one read per
        audience, not per listener (a listener drops what it has already).
        The events a snapshot counts go first, from the history: a write
        made since the repair read it may still be on its way live, behind
        this, and a feed never shows a state before the events that made it."""
        by_seat: dict[int | None, list[Listener]] = {}
        for listener in entry.listeners:
            by_seat.setdefault(listener.seat, []).append(listener)
        for listeners in by_seat.values():
            try:
                snapshot = await listeners[0].current()
                if isinstance(snapshot, match_pb2.Snapshot) and snapshot.last_event_id > (entry.last_id or 0):
                    await self._fill(match_id, entry, snapshot.last_event_id)
            except Exception as error:  # the next write brings one anyway
                log.warning("refreshing a feed's snapshot failed (%s)", error)
                continue
            for listener in listeners:
                listener.offer(Item(snapshot))

    async def close(self, why: Refused | None = None) -> None:
        """Stop every feed (draining: they resume elsewhere) and the connections."""
        self._closing = why or unavailable("this server is draining; resume on another", "draining")
        for entry in list(self._matches.values()):
            for listener in list(entry.listeners):
                listener.stop(self._closing)
        for shard in self._shards.values():
            await shard.close()


def decode_event(event_id: int, raw: bytes) -> match_pb2.MatchEvent:
    event = match_pb2.MatchEvent.FromString(raw)
    event.id = event_id
    return event


class Shard:
    """One pub/sub connection (a :class:`~services.core.wire.Subscriber`:
    what Redis pushes, parsed by hiredis, none of redis-py's per-message
    machinery) and the task that reads it. The channels it should hold are
    kept here: a new connection subscribes to all of them at once."""

    def __init__(
        self,
        client: Redis,
        sharded: bool,
        deliver: Callable[[str, bytes], Awaitable[None]],
        repair: Callable[[Shard], Awaitable[None]],
    ) -> None:
        self.wire = Wire(client.connection_pool)
        self.subscribe_command = "SSUBSCRIBE" if sharded else "SUBSCRIBE"
        self.unsubscribe_command = "SUNSUBSCRIBE" if sharded else "UNSUBSCRIBE"
        self.deliver = deliver
        self.repair = repair
        self.channels: set[str] = set()
        self.task: asyncio.Task[None] | None = None
        self._link = Link(self._open)  # a new connection subscribes to every channel
        self._confirm: dict[str, asyncio.Future[None]] = {}

    async def subscribe(self, channel: str) -> None:
        confirmed = asyncio.get_running_loop().create_future()
        self._confirm[channel] = confirmed
        self.channels.add(channel)
        try:
            connection = self._link.current
            if connection is None or connection.closed:
                await self._link.get()
            else:
                connection.push(self.subscribe_command, channel)
            if self.task is None or self.task.done():
                # The listener serves every feed after this one: none of their traces.
                self.task = asyncio.create_task(self._read(), context=tracing.background())
            await asyncio.wait_for(asyncio.shield(confirmed), SUBSCRIBE_TIMEOUT_SECONDS)
        except BaseException:
            self.channels.discard(channel)
            connection = self._link.current
            if connection is not None and not connection.closed:  # in case it comes after all
                connection.push(self.unsubscribe_command, channel)
            raise
        finally:
            self._confirm.pop(channel, None)

    def unsubscribe_soon(self, channel: str, wanted_again: Callable[[], bool]) -> None:
        def unsubscribe() -> None:
            if wanted_again():  # a new listener came meanwhile: keep it
                return
            self.channels.discard(channel)
            connection = self._link.current
            if connection is not None and not connection.closed:
                connection.push(self.unsubscribe_command, channel)

        asyncio.get_running_loop().call_soon(unsubscribe)

    async def _open(self) -> Subscriber:
        connection = await self.wire.subscriber()
        if self.channels:
            connection.push(self.subscribe_command, *sorted(self.channels))
        return connection

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        heard = loop.time()
        pinged: float | None = None
        while True:
            connection = self._link.current
            try:
                if connection is None:
                    raise RedisConnectionError("not connected")
                message = await connection.get(POLL_SECONDS)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("feed connection lost (%s); reconnecting", error)
                await asyncio.sleep(0.5)
                await self._reconnected()
                heard, pinged = loop.time(), None
                continue
            now = loop.time()
            if message is None:
                if pinged is not None and now - pinged > HEALTH_SECONDS:
                    log.warning("feed connection silent; reconnecting")
                    connection.close()
                    await self._reconnected()
                    heard, pinged = loop.time(), None
                elif pinged is None and now - heard > HEALTH_SECONDS:
                    with contextlib.suppress(RedisError):  # lost: the next get says so
                        connection.push("PING")
                    pinged = now
                continue
            heard, pinged = now, None
            await self._handle(message)

    async def _handle(self, message: list[Any]) -> None:
        kind = message[0]
        if kind in (b"message", b"smessage"):
            try:
                await self.deliver(_text(message[1]), message[2])
            except Exception:
                log.exception("delivering a live message failed")
        elif kind in (b"subscribe", b"ssubscribe"):
            confirmed = self._confirm.get(_text(message[1]))
            if confirmed is not None and not confirmed.done():
                confirmed.set_result(None)

    async def _reconnected(self) -> None:
        """A new connection, subscribed to every channel; once Redis has taken
        the subscriptions (a PING sent after them is answered), the gaps
        filled from the history: whatever is written after that comes live,
        and what came before it is in the history. If Redis is still away,
        the next read says so and this comes again."""
        try:
            connection = await self._link.get()
            connection.push("PING")
            async with asyncio.timeout(HEALTH_SECONDS):
                while (message := await connection.get(HEALTH_SECONDS)) is None or message[0] != b"pong":
                    if message is not None:
                        await self._handle(message)
        except Exception:
            if self._link.current is not None:
                self._link.current.close()  # read again, it tells the loss
            return
        await self.repair(self)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        self._link.close()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
