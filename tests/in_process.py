"""A game service in the test's own process: the real MatchServicer behind
the real CallGuard on a loopback port, over a real Redis, with tokens from a
key of its own. Unit tests of the kit and of the gateway's tables call it as
the gateway does, over gRPC."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from google.protobuf import any_pb2
from google.protobuf.message import Message
from rodada.common.v1 import match_pb2, match_pb2_grpc

from services.core.feeds import FeedHub
from services.core.limits import Limit
from services.core.store import RecordStore
from services.core.tokens import Identity, TokenSigner, TokenVerifier
from services.kit.game import Game
from services.kit.matches import MatchServicer
from services.kit.server import match_guard

NO_LIMIT = Limit("actions", 0, 1)


class Keys:
    """A signing key and the verifier that trusts it."""

    def __init__(self) -> None:
        self.signer = TokenSigner(Ed25519PrivateKey.generate())
        self.verifier = TokenVerifier([self.signer.public_key])

    def token(self, user_id: str, role: str = "user", ttl: int = 3600) -> str:
        return self.signer.issue(Identity(user_id, user_id, role), ttl)

    def auth(self, user_id: str, role: str = "user") -> tuple[tuple[str, str]]:
        """gRPC metadata carrying ``user_id``'s access token."""
        return (("authorization", f"Bearer {self.token(user_id, role)}"),)

    def platform(self) -> tuple[tuple[str, str]]:
        return self.auth("platform:tests", "platform")


class GameServer:
    """``game``'s MatchService on 127.0.0.1; ``stop`` and ``start`` again
    serve on the same port (a restarted service)."""

    def __init__(
        self, game: Game, store: RecordStore, keys: Keys, clock: Callable[[], float] = time.time
    ) -> None:
        self.game = game
        self.store = store
        self.keys = keys
        self.clock = clock
        self.port = 0
        self.servicer: MatchServicer | None = None
        self._server: grpc.aio.Server | None = None
        self.channel: grpc.aio.Channel | None = None
        self.stub: Any = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self) -> GameServer:
        hub = FeedHub(self.store.redis, self.store)
        self.servicer = MatchServicer(self.game, self.store, hub, NO_LIMIT, self.clock)
        server = grpc.aio.server(interceptors=[match_guard(self.game, self.keys.verifier)])
        match_pb2_grpc.add_MatchServiceServicer_to_server(self.servicer, server)
        self.port = server.add_insecure_port(self.address)
        await server.start()
        self._server = server
        if self.channel is None:
            self.channel = grpc.aio.insecure_channel(self.address)
            self.stub = match_pb2_grpc.MatchServiceStub(self.channel)
        return self

    async def create(
        self, match_id: str, users: Sequence[str], options: Message | None = None, cpu: Sequence[int] = ()
    ) -> match_pb2.Snapshot:
        """Create a match as the platform does: ``users`` seated in order,
        the seats in ``cpu`` played by the computer."""
        packed = any_pb2.Any()
        if options is not None:
            packed.Pack(options)
        seats = [
            match_pb2.Seat(cpu=True, display_name=f"CPU {i}")
            if i in cpu
            else match_pb2.Seat(user_id=user, display_name=user)
            for i, user in enumerate(users)
        ]
        request = match_pb2.CreateMatchRequest(match_id=match_id, seats=seats, options=packed)
        reply = await self.stub.CreateMatch(request, metadata=self.keys.platform())
        return reply.snapshot

    async def stop(self) -> None:
        if self.servicer is not None:
            await self.servicer.hub.close()
        if self._server is not None:
            await self._server.stop(None)
            self._server = None

    async def __aenter__(self) -> GameServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
        if self.channel is not None:
            await self.channel.close()
