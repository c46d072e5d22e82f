"""The games, as the gateway learns them: where each is served (settings)
and everything else from the game's own ``Describe``. The gateway imports no
game code and no game's generated stubs: a game's messages are built from
the proto descriptors its ``Describe`` sends (``GameInfo.descriptors``), so
the gateway serves a game it has never seen once ``GAMES`` lists it.

Each game gets long-lived channels that spread calls over every ready
replica (``dns:///`` resolution with round_robin: behind a headless
Kubernetes Service each pod is an address), with keepalive both ways. There
are ``GAME_CHANNELS`` of them, each with connections of its own, and calls
are dealt over them in turn: a pod running several processes on one port
(WORKERS) gets a connection from this gateway per channel, which the kernel
spreads over its processes; one connection would keep a gateway's calls on
one of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

import grpc
import orjson
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import DecodeError, Message
from rodada.common.v1 import match_pb2, match_pb2_grpc

from services.core import strict, tracing
from services.core.errors import Refused, invalid, not_found, unavailable

if TYPE_CHECKING:
    from rodada.common.v1.match_pb2_grpc import MatchServiceAsyncStub

log = logging.getLogger("rodada.gateway.games")

CHANNEL_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.lb_policy_name", "round_robin"),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    # Re-resolve often enough that new replicas get traffic soon after they start.
    ("grpc.dns_min_time_between_resolutions_ms", 5_000),
]
DESCRIBE_RETRY_SECONDS = 1.0
TYPE_URL = "type.googleapis.com/"
# How a client's game message that is not one is refused, by the message's
# name: the game services' own reasons (services/kit/matches.py).
REFUSALS = {"Options": "invalid_options", "Action": "malformed_action", "Question": "invalid_question"}
# Game messages packed, per game and spelling: a handful of options, each
# packed again for every ticket and table (2-3 % of the gateway's CPU in a
# matchmaking burst, py-spy), and a game's actions, one a move (2 % on the
# web path); bounded, emptied when full.
PACKED = 1024


def refusal(name: str) -> str:
    return REFUSALS.get(name, "invalid_request")


@dataclass
class GameClient:
    """One game: its facts, its messages and the stub to call it."""

    info: match_pb2.GameInfo
    messages: SimpleNamespace  # the game's message classes by name: Options, Action, View, …
    stub: MatchServiceAsyncStub
    _packed: dict[tuple[str, bytes], any_pb2.Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.info.name

    def message(self, name: str) -> type[Message]:
        cls = getattr(self.messages, name, None)
        if cls is None:
            raise not_found("no_such_message", f"{self.name} has no {name}")
        return cast(type[Message], cls)

    def parse(self, name: str, data: Any, reason: str | None = None) -> Message:
        """JSON from an HTTP client → the game's ``name`` message, parsed
        strictly (services/core/strict.py); refused with ``reason`` (by default
        the game services' own for that message, REFUSALS)."""
        message = self.message(name)()
        if isinstance(data, dict) and "@type" in data:
            if data["@type"] != TYPE_URL + message.DESCRIPTOR.full_name:
                raise invalid(reason or refusal(name), f"expected a {message.DESCRIPTOR.full_name}")
            data = {key: value for key, value in data.items() if key != "@type"}
        try:
            return strict.parse_json(data, message)
        except strict.Invalid as exc:
            raise invalid(reason or refusal(name), str(exc)) from None

    def pack(self, name: str, data: Any, reason: str | None = None) -> any_pb2.Any:
        """:meth:`parse`, packed in an Any (a fresh one: callers may change it).
        Each spelling of a message is parsed once (a bounded cache): a game's
        options for every ticket, table and start, its few actions for every
        move (the strict parse costs twenty times the lookup)."""
        spelling = spelling_key(data)
        key = None if spelling is None else (name, spelling)
        cached = self._packed.get(key) if key is not None else None
        packed = any_pb2.Any()
        if cached is not None:
            packed.CopyFrom(cached)
            return packed
        packed.Pack(self.parse(name, data, reason))
        if key is not None:
            if len(self._packed) >= PACKED:
                self._packed.clear()
            self._packed[key] = any_pb2.Any()
            self._packed[key].CopyFrom(packed)
        return packed

    def unpack(self, name: str, packed: any_pb2.Any, reason: str | None = None) -> Message:
        """A client's packed message, checked to be the game's ``name``, to
        decode, and to hold nothing unknown (services/core/strict.py)."""
        message = self.message(name)()
        if not packed.ByteSize():
            return message
        try:
            if not packed.Unpack(message):
                raise invalid(reason or refusal(name), f"expected a {message.DESCRIPTOR.full_name}")
            strict.check(message)
        except (DecodeError, strict.Invalid) as exc:
            raise invalid(reason or refusal(name), f"not a {message.DESCRIPTOR.full_name}: {exc}") from None
        return message

    def options(self, packed: any_pb2.Any) -> dict[str, Any]:
        """A table's options in canonical proto JSON, unset fields with the
        game's defaults: two spellings of one table's rules are equal."""
        given = json_format.MessageToDict(self.unpack("Options", packed), preserving_proto_field_name=True)
        filled = self.pack("Options", {**json_format.MessageToDict(self.info.option_defaults), **given})
        return json_format.MessageToDict(self.unpack("Options", filled), preserving_proto_field_name=True)

    def check_ranked(self, options: dict[str, Any]) -> None:
        """A practice table (one of the game's practice options set, e.g. the
        advisor's ``advice``) is never ranked: refused before it queues."""
        practice = [name for name in self.info.practice_options if options.get(name)]
        if practice:
            raise invalid(
                "practice_unranked",
                f"{', '.join(practice)} makes a practice table: ranked play has no {practice[0]}",
            )

    def mode(self, name: str) -> match_pb2.Mode:
        for mode in self.info.modes:
            if mode.name == name:
                return mode
        raise not_found("unknown_mode", f"{self.name} has no mode {name!r}")

    def mode_for(self, seats: int, options: dict[str, Any]) -> match_pb2.Mode:
        """The mode a table of ``seats`` with ``options`` plays (as the game's
        kit decides: unset options fit any mode, set ones must agree)."""
        for mode in self.info.modes:
            wanted = json_format.MessageToDict(mode.options)
            if seats in mode.seat_counts and all(options.get(k, v) == v for k, v in wanted.items()):
                return mode
        counts = sorted({s for m in self.info.modes for s in m.seat_counts})
        raise invalid(
            "invalid_seats", f"{self.name} tables have {', '.join(map(str, counts))} seats for these options"
        )


def spelling_key(data: Any) -> bytes | None:
    """A game message's spelling (options, an action) as a cache key: its
    JSON, keys sorted (``1``, ``1.0`` and ``true`` stay apart); None for what
    JSON cannot spell."""
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None


# The messages a game's proto package holds, as the platform uses them.
GAME_MESSAGES = ("Options", "Action", "View", "Event", "Question", "Answer")


def game_messages(info: match_pb2.GameInfo) -> SimpleNamespace:
    """The game's messages, from the descriptors its Describe sent: each
    file added to the process's descriptor pool once (a file already there,
    such as the common proto, is left as it is), then each message's class."""
    pool = descriptor_pool.Default()
    files = descriptor_pb2.FileDescriptorSet.FromString(info.descriptors).file
    if not files:
        raise invalid("misconfigured", f"{info.name} sent no proto descriptors")
    for file in files:
        try:
            pool.FindFileByName(file.name)
        except KeyError:
            pool.Add(file)
    found = {}
    for name in GAME_MESSAGES:
        try:
            descriptor = pool.FindMessageTypeByName(f"{info.proto_package}.{name}")
        except KeyError:
            continue
        found[name] = message_factory.GetMessageClass(descriptor)
    return SimpleNamespace(**found)


def channel_target(address: str) -> str:
    """The gRPC target for a game's address: a name resolved (and resolved
    again) through DNS, or a fixed list of replicas' ``ip:port``."""
    replicas = address.split()
    if len(replicas) > 1:
        return "ipv4:" + ",".join(replicas)
    return f"dns:///{address}"


class DealtStub:
    """A stub whose calls are dealt over several channels in turn, skipping
    those not connected while one is: after a replica restarts, calls go
    through as soon as one channel has reconnected (a skipped channel is
    asked to connect)."""

    def __init__(self, channels: list[grpc.aio.Channel]) -> None:
        self._count = len(channels)
        self._turns = itertools.cycle([(c, match_pb2_grpc.MatchServiceStub(c)) for c in channels])

    def __getattr__(self, method: str) -> Any:
        for _ in range(self._count):
            channel, stub = next(self._turns)
            if channel.get_state(try_to_connect=True) is grpc.ChannelConnectivity.READY:
                break
        return getattr(stub, method)


class Games:
    """Every configured game; a game is usable once it has described itself."""

    def __init__(self, addresses: dict[str, str], channels: int = 1) -> None:
        self._addresses = addresses
        # Channels of one process share connections unless each has its own pool.
        options = (
            [*CHANNEL_OPTIONS, ("grpc.use_local_subchannel_pool", 1)] if channels > 1 else CHANNEL_OPTIONS
        )
        self._channels = {
            name: [
                grpc.aio.insecure_channel(
                    channel_target(address), options=options, interceptors=tracing.client_interceptors()
                )
                for _ in range(channels)
            ]
            for name, address in addresses.items()
        }
        self._games: dict[str, GameClient] = {}
        self._describing: asyncio.Task[None] | None = None

    @property
    def names(self) -> list[str]:
        return sorted(self._addresses)

    def described(self) -> list[GameClient]:
        return [self._games[name] for name in sorted(self._games)]

    def get(self, name: str) -> GameClient:
        game = self._games.get(name)
        if game is not None:
            return game
        if name in self._addresses:
            raise unavailable(f"{name} is not reachable yet; retry shortly")
        raise not_found("unknown_game", f"no game {name!r}; games: {', '.join(self.names)}")

    async def start(self, wait_seconds: float = 0.0) -> None:
        """Describe every game, in the background until all have answered;
        wait up to ``wait_seconds`` for them first."""
        self._describing = asyncio.create_task(self._describe_all())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._describing), wait_seconds)

    async def _describe_all(self) -> None:
        pending = set(self._addresses)
        while pending:
            for name in sorted(pending):
                try:
                    self._games[name] = await self._describe(name)
                    pending.discard(name)
                except (grpc.aio.AioRpcError, Refused, TypeError) as error:
                    log.warning("game %s not described yet: %s", name, error)
            if pending:
                await asyncio.sleep(DESCRIBE_RETRY_SECONDS)

    async def _describe(self, name: str) -> GameClient:
        channels = self._channels[name]
        one = len(channels) == 1
        stub = cast(
            "MatchServiceAsyncStub",
            match_pb2_grpc.MatchServiceStub(channels[0]) if one else DealtStub(channels),
        )
        reply = await stub.Describe(match_pb2.DescribeRequest(), timeout=5)
        info = reply.game
        if info.name != name:
            raise invalid("misconfigured", f"{self._addresses[name]} serves {info.name}, not {name}")
        return GameClient(info, game_messages(info), stub)

    async def close(self) -> None:
        if self._describing is not None:
            self._describing.cancel()
        for channels in self._channels.values():
            for channel in channels:
                await channel.close(None)
