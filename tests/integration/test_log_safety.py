"""Logs are JSON lines, and a full game with hidden information (Dudo, with
a CPU seat and assisted mode) leaves no token, password, seed or die in them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from tests.integration.http_client import ACTIVE, follow, register
from tests.integration.test_dudo_flow import decide
from tools.stack import Stack


async def test_a_dudo_game_logs_no_secret(stack: Stack) -> None:
    base = stack.gateway()
    async with httpx.AsyncClient(base_url=base, timeout=15) as http:
        players = [await register(http, n) for n in ("ana", "bia", "caio")]
        login = await http.post(
            "/v1/auth/login", json={"username": players[0].name, "password": "correct horse"}
        )
        assert login.status_code == 200, login.text
        tokens = {p.token for p in players} | {p.refresh_token for p in players}
        tokens |= {login.json()["access_token"], login.json()["refresh_token"]}
        table = await players[0].create_table("dudo", 4, cpu_seats=[3])
        for player in players[1:]:
            await player.join(table["invite_code"])
        table_id = table["id"]
        snap = await players[0].start(table_id)
        assert [s["cpu"] for s in snap["seats"]] == [False, False, False, True]
        feeds = [asyncio.create_task(follow(p, base, table_id)) for p in players]
        snap = await players[0].act(table_id, snap["version"], {"set_assist": {"on": True}})
        await players[0].ask(table_id, {"bid_odds": {"quantity": 2, "face": 3}})
        hands: list[list[int]] = []
        while snap["status"] == ACTIVE:
            (seat,) = snap["to_act"]
            mine = await players[seat].view(table_id)
            hands.append(mine["view"]["my_dice"])
            snap = await players[seat].act(table_id, mine["version"], decide(mine["view"]))
        await asyncio.wait_for(asyncio.gather(*feeds), 30)
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
