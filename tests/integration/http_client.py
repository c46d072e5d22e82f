"""A small client for the gateway's HTTP API and its WebSocket feeds, as a web
frontend would use them."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import websockets

ACTIVE, FINISHED = "MATCH_STATUS_ACTIVE", "MATCH_STATUS_FINISHED"


class ApiRefused(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"{status}: {body}")
        self.status = status
        self.code = body.get("error", {}).get("code")


@dataclass
class Player:
    http: httpx.AsyncClient
    token: str
    user_id: str
    name: str
    refresh_token: str = ""

    @property
    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token}"}

    async def call(self, method: str, path: str, json: Any = None) -> dict[str, Any]:
        response = await self.http.request(method, path, json=json, headers=self.headers)
        body: dict[str, Any] = response.json() if response.content else {}
        if response.status_code >= 400:
            raise ApiRefused(response.status_code, body)
        return body

    async def create_table(
        self, game: str, seats: int, options: dict[str, Any] | None = None, cpu_seats: list[int] | None = None
    ) -> dict[str, Any]:
        body = {"game": game, "seats": seats, "options": options or {}, "cpu_seats": cpu_seats or []}
        return await self.call("POST", "/v1/tables", body)

    async def table(self, table_id: str) -> dict[str, Any]:
        return await self.call("GET", f"/v1/tables/{table_id}")

    async def join(self, invite_code: str) -> dict[str, Any]:
        return await self.call("POST", "/v1/tables/join", {"invite_code": invite_code})

    async def sit(self, table_id: str, seat: int | None = None) -> dict[str, Any]:
        return await self.call("POST", f"/v1/tables/{table_id}/sit", {"seat": seat})

    async def start(self, table_id: str) -> dict[str, Any]:
        return await self.call("POST", f"/v1/tables/{table_id}/start")

    async def view(self, table_id: str) -> dict[str, Any]:
        return await self.call("GET", f"/v1/tables/{table_id}/view")

    async def act(self, table_id: str, version: int, action: dict[str, Any]) -> dict[str, Any]:
        return await self.call(
            "POST", f"/v1/tables/{table_id}/actions", {"expected_version": version, "action": action}
        )

    async def ask(self, table_id: str, question: dict[str, Any]) -> dict[str, Any]:
        return await self.call("POST", f"/v1/tables/{table_id}/ask", {"question": question})

    async def leave(self, table_id: str) -> dict[str, Any]:
        return await self.call("POST", f"/v1/tables/{table_id}/leave")

    def feed(self, base_url: str, table_id: str, after_event_id: int = 0) -> Feed:
        return Feed(base_url, table_id, self.token, after_event_id)


async def register(http: httpx.AsyncClient, prefix: str = "player") -> Player:
    username = f"{prefix}{secrets.token_hex(4)}"
    response = await http.post("/v1/auth/register", json={"username": username, "password": "correct horse"})
    assert response.status_code == 201, response.text
    body = response.json()
    return Player(http, body["access_token"], body["user"]["id"], username, body["refresh_token"])


async def guest(http: httpx.AsyncClient, name: str | None = None) -> Player:
    response = await http.post("/v1/auth/guest", json={"name": name} if name else {})
    assert response.status_code == 201, response.text
    body = response.json()
    return Player(http, body["access_token"], body["user"]["id"], body["user"]["name"], body["refresh_token"])


async def seated_table(
    players: list[Player], game: str, options: dict[str, Any] | None = None
) -> tuple[str, dict[str, Any]]:
    """Host (players[0]) opens a table, the others join by invite, the host
    starts it. Returns the table id and the host's first snapshot."""
    table = await players[0].create_table(game, len(players), options)
    for player in players[1:]:
        await player.join(table["invite_code"])
    snapshot = await players[0].start(table["id"])
    return table["id"], snapshot


def game_event(item: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A feed item's game event as (kind, data), or None for anything else."""
    event = item.get("event", {}).get("event")
    if not event:
        return None
    ((kind, data),) = ((k, v) for k, v in event.items() if k != "@type")
    return kind, data


def notice(item: dict[str, Any]) -> dict[str, Any] | None:
    return item.get("event", {}).get("notice")


def table_change(item: dict[str, Any]) -> dict[str, Any] | None:
    return item.get("event", {}).get("table")


@dataclass
class Feed:
    """One WebSocket feed of a table: ``async with`` opens it and sends the
    hello; ``next``/``until`` read items (each a dict: ``event``,
    ``snapshot``, ``table``, ``end``, ``error``, ``pong``)."""

    base_url: str
    table_id: str
    token: str
    after_event_id: int = 0
    items: list[dict[str, Any]] = field(default_factory=list)
    socket: Any = None

    async def __aenter__(self) -> Feed:
        url = self.base_url.replace("http", "ws", 1) + f"/v1/tables/{self.table_id}/events"
        self.socket = await websockets.connect(url, ping_interval=None, max_size=2**24)
        await self.socket.send(json.dumps({"token": self.token, "after_event_id": self.after_event_id}))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.socket.close()

    async def next(self, timeout: float = 10.0) -> dict[str, Any]:
        item: dict[str, Any] = json.loads(await asyncio.wait_for(self.socket.recv(), timeout))
        self.items.append(item)
        return item

    async def until(
        self, done: Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> list[dict[str, Any]]:
        """Read until an item satisfies ``done``; the items read, that one last."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            item = await self.next(max(0.01, deadline - time.monotonic()))
            seen.append(item)
            if done(item):
                return seen

    async def snapshot(self, timeout: float = 10.0) -> dict[str, Any]:
        """The next pushed snapshot."""
        return (await self.until(lambda item: "snapshot" in item, timeout))[-1]["snapshot"]

    async def snapshot_at(self, version: int, timeout: float = 10.0) -> dict[str, Any]:
        """The snapshot pushed for ``version`` (read up to it, unless it came already)."""
        for item in reversed(self.items):
            if item.get("snapshot", {}).get("version") == version:
                return item["snapshot"]  # type: ignore[no-any-return]
        seen = await self.until(lambda item: item.get("snapshot", {}).get("version", -1) >= version, timeout)
        snap: dict[str, Any] = seen[-1]["snapshot"]
        assert snap["version"] == version, f"version {version} was skipped: {snap['version']} came"
        return snap

    async def to_end(self, timeout: float = 300.0) -> list[dict[str, Any]]:
        """Read until the match's end: every item this feed carried, the
        ``end`` item last (the server then closes with 1000)."""
        await self.until(lambda item: "end" in item or "error" in item, timeout)
        await asyncio.wait_for(self.socket.wait_closed(), 10)
        assert self.items[-1] == {"end": {"reason": "finished"}}, self.items[-1]
        assert self.close_code == 1000
        return self.items

    @property
    def last_event_id(self) -> int:
        ids = [item["event"]["id"] for item in self.items if "event" in item]
        return max(ids, default=self.after_event_id)

    @property
    def close_code(self) -> int | None:
        return self.socket.close_code if self.socket else None


# -- following a whole match, and what GET /view said -------------------------------


async def follow(
    player: Player, base_url: str, table_id: str, after_event_id: int = 0, timeout: float = 300.0
) -> list[dict[str, Any]]:
    """Every item ``player``'s feed of the table carries until the match's
    end (the ``end`` item last; the socket then closed 1000). Run it as a
    task beside the play."""
    async with player.feed(base_url, table_id, after_event_id) as feed:
        return await feed.to_end(timeout)


def game_events(items: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """The game events among feed items: (kind, data, the whole MatchEvent)."""
    return [(*found, item["event"]) for item in items if (found := game_event(item))]


def snapshots(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item["snapshot"] for item in items if "snapshot" in item]


def notices(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [n for item in items if (n := notice(item))]


@dataclass
class Views:
    """GET /view as each viewer (a seat; -1 for a spectator) had it at each
    version: ``record`` after every move, then ``check`` that a feed's pushed
    snapshots are exactly what GET /view gave that viewer at the same version."""

    table_id: str
    viewers: dict[int, Player]
    seen: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)

    async def record(self) -> dict[int, dict[str, Any]]:
        """Every viewer's snapshot now (all at one version)."""
        got = await asyncio.gather(*(p.view(self.table_id) for p in self.viewers.values()))
        now = dict(zip(self.viewers, got, strict=True))
        assert len({s["version"] for s in now.values()}) == 1, "the match moved while it was read"
        for seat, snap in now.items():
            assert snap["seat"] == seat, (seat, snap["seat"])
            self.seen[(seat, snap["version"])] = snap
        return now

    def check(self, seat: int, items: list[dict[str, Any]]) -> int:
        """Every snapshot pushed on ``seat``'s feed equals the recorded GET
        /view of that seat at that version; how many there were."""
        pushed = snapshots(items)
        assert pushed, "the feed pushed no snapshot"
        versions = [s["version"] for s in pushed]
        assert versions == sorted(set(versions)), versions  # one per version, in order
        for snap in pushed:
            recorded = self.seen.get((seat, snap["version"]))
            assert recorded is not None, f"seat {seat}: version {snap['version']} was never read"
            assert_same(snap, recorded, f"seat {seat}'s pushed snapshot and GET /view")
        return len(pushed)


def assert_same(snap: dict[str, Any], read: dict[str, Any], what: str = "snapshots") -> None:
    """Two snapshots of one version are the same, field by field."""
    differing = {
        k: (snap.get(k), read.get(k)) for k in snap.keys() | read.keys() if snap.get(k) != read.get(k)
    }
    assert not differing, f"{what} differ at version {snap['version']}: {differing}"
