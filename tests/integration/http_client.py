"""A small client for the gateway's HTTP API, as a web frontend would use it."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

import httpx


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

    @property
    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token}"}

    async def call(self, method: str, path: str, json: Any = None) -> dict[str, Any]:
        response = await self.http.request(method, path, json=json, headers=self.headers)
        body: dict[str, Any] = response.json()
        if response.status_code >= 400:
            raise ApiRefused(response.status_code, body)
        return body

    async def create_table(
        self, game: str, seats: int, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return await self.call("POST", "/v1/tables", {"game": game, "seats": seats, "options": options or {}})

    async def join(self, invite_code: str) -> dict[str, Any]:
        return await self.call("POST", "/v1/tables/join", {"invite_code": invite_code})

    async def start(self, table_id: str) -> dict[str, Any]:
        return await self.call("POST", f"/v1/tables/{table_id}/start")

    async def view(self, table_id: str) -> dict[str, Any]:
        return await self.call("GET", f"/v1/tables/{table_id}/view")

    async def act(self, table_id: str, version: int, action: dict[str, Any]) -> dict[str, Any]:
        return await self.call(
            "POST", f"/v1/tables/{table_id}/actions", {"expected_version": version, "action": action}
        )

    async def leave(self, table_id: str) -> dict[str, Any]:
        return await self.call("POST", f"/v1/tables/{table_id}/leave")


async def register(http: httpx.AsyncClient, prefix: str = "player") -> Player:
    username = f"{prefix}{secrets.token_hex(4)}"
    response = await http.post("/v1/auth/register", json={"username": username, "password": "correct horse"})
    assert response.status_code == 201, response.text
    body = response.json()
    return Player(http, body["access_token"], body["user"]["id"], username)


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
