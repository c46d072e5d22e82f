"""Logs are JSON lines, and a full game with hidden information (Dudo) leaves
no token, password, seed or die in them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from tests.integration.http_client import register, seated_table
from tests.integration.test_dudo_flow import decide, follow
from tools.stack import Stack


async def test_a_dudo_game_logs_no_secret(stack: Stack) -> None:
    stack.service("dudo")
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as http:
        players = [await register(http, n) for n in ("ana", "bia", "caio")]
        login = await http.post(
            "/v1/auth/login", json={"username": players[0].name, "password": "correct horse"}
        )
        tokens = {p.token for p in players} | {login.json()["access_token"], login.json()["refresh_token"]}
        table_id, snap = await seated_table(players, "dudo")
        feeds = [asyncio.create_task(follow(stack, table_id, p)) for p in players]
        hands: list[list[int]] = []
        while snap["status"] == "ACTIVE":
            (seat,) = snap["to_act"]
            mine = await players[seat].view(table_id)
            hands.append(mine["view"]["my_dice"])
            snap = await players[seat].act(table_id, mine["version"], decide(mine["view"]))
        await asyncio.gather(*feeds)
        seed = snap["fairness"]["seed"]
    assert seed and hands

    lines: list[dict[str, Any]] = []
    for name in ("dudo", "gateway"):
        for raw in stack.log_path(name).read_text().splitlines():
            assert raw.startswith("{"), f"not a JSON log line: {raw[:120]}"
            lines.append(json.loads(raw))
    assert lines and all({"ts", "level", "logger", "msg"} <= line.keys() for line in lines)
    text = "\n".join(json.dumps(line) for line in lines)
    assert not any(token in text for token in tokens)
    assert "correct horse" not in text
    assert seed not in text
    assert "dice" not in text.lower()
    for hand in hands:
        if len(hand) >= 2:
            assert json.dumps(hand) not in text and str(hand) not in text
