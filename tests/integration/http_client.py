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

    async def until(self, done: Callable[[dict[str, Any]], bool], timeout: float = 10.0) -> list[dict[str, Any]]:
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

    @property
    def last_event_id(self) -> int:
        ids = [item["event"]["id"] for item in self.items if "event" in item]
        return max(ids, default=self.after_event_id)

    @property
    def close_code(self) -> int | None:
        return self.socket.close_code if self.socket else None
