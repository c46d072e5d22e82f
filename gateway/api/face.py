"""What every servicer shares, whichever face a call came by.

A servicer method takes ``(request, context)``. Over gRPC the context is
grpc's; over HTTP the transcoder's :class:`HttpContext`, which answers the
same two questions: the call's metadata (the caller's token) and its peer.
Either way the token was verified before the method runs — by the kit's
call guard (gRPC) or the transcoder (HTTP), into the same ``CALLER`` — so
the caller is looked up once, here, and never verified twice."""

from __future__ import annotations

from typing import Any, Protocol, TypeAlias

from google.protobuf import any_pb2, json_format

from gateway.games import Games
from gateway.matches import Caller
from gateway.platform import Platform
from services.core import guard


class Context(Protocol):
    """The part of a call's context the servicers use."""

    def invocation_metadata(self) -> Any: ...

    def peer(self) -> str: ...


class HttpContext:
    """An HTTP request as a servicer sees it: its bearer token as gRPC
    metadata, the client's address as a gRPC peer."""

    __slots__ = ("_metadata", "_peer")

    def __init__(self, token: str | None, host: str, port: int) -> None:
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self._peer = f"ipv6:[{host}]:{port}" if ":" in host else f"ipv4:{host}:{port}"

    def invocation_metadata(self) -> Any:
        return self._metadata

    def peer(self) -> str:
        return self._peer


# Calls that need no token (an expired one is ignored): getting one, and
# reading the games.
OPEN = frozenset(("SignUp", "LogIn", "LogInAsGuest", "Refresh", "ListGames"))


def caller(context: Context) -> Caller:
    """The authenticated caller: the identity the guard or the transcoder
    verified, with the token it came with (forwarded to the games)."""
    return Caller(guard.caller(), guard.bearer(context.invocation_metadata()) or "")


def client_address(context: Context) -> str:
    """The client's host, without its port (per-client limits hold across
    connections): ``ipv4:1.2.3.4:5678`` → ``1.2.3.4``, ``ipv6:[::1]:5678`` →
    ``::1``."""
    peer = context.peer() or "unknown"
    address = peer.split(":", 1)[1] if peer.startswith(("ipv4:", "ipv6:")) else peer
    if address.startswith("["):
        return address[1 : address.index("]")]
    return address.rsplit(":", 1)[0] if address.count(":") == 1 else address


def options(games: Games, game: str, packed: any_pb2.Any) -> dict[str, Any]:
    """A request's packed Options (empty: the defaults) as the JSON object
    tables, queues and tournaments keep."""
    if not packed.ByteSize():
        return {}
    message = games.get(game).unpack("Options", packed)
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


class Servicer:
    """A service's implementation over the platform."""

    def __init__(self, platform: Platform) -> None:
        self.p = platform


ServicerClass: TypeAlias = type[Servicer]
