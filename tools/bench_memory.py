"""Redis memory of active matches (issue 15: ≤ 2 KB per active match plus its
events), measured with ``MEMORY USAGE`` on matches played through the
gateway as players do (a guest's table, started, half a game of moves).

Per match: its hash (version, write token, match record, table record) and
its events stream; its entries in the group's clock and active set are a few
dozen bytes each of shared keys, counted from the members' lengths.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

import httpx
import redis

from services.core import keys
from tools.stack import Stack

MATCHES = 20
MOVES = 20  # of a solo Yatzy's 39 (13 rounds × 3 throws-or-score): mid-game


@dataclass
class Memory:
    matches: int
    moves: int
    hash_bytes: float  # median MEMORY USAGE of a match's hash
    events_bytes: float  # median of its events stream
    events: float  # median events per match
    shared_bytes: float  # its clock and active-set members, as bytes of member strings

    @property
    def per_event(self) -> float:
        return self.events_bytes / self.events if self.events else float("nan")


def _next(snapshot: dict[str, Any]) -> dict[str, Any]:
    view = snapshot["view"]
    if view["throws_used"] == 0:
        return {"roll": {}}
    face = Counter(view["dice"]).most_common(1)[0][0]
    keep = [i for i, d in enumerate(view["dice"]) if d == face]
    if view["throws_used"] < 2 and len(keep) < 5:
        return {"roll": {"keep": keep}}
    return {"score": {"box": max(view["preview"], key=lambda p: p["points"])["box"]}}


def measure(stack: Stack, matches: int = MATCHES, moves: int = MOVES) -> Memory:
    ids: list[str] = []
    with httpx.Client(base_url=stack.gateway(), timeout=30) as http:
        for i in range(matches):
            session = http.post("/v1/auth/guest", json={"name": f"mem{i}"}).json()
            headers = {"authorization": f"Bearer {session['access_token']}"}
            table = http.post("/v1/tables", json={"game": "yatzy", "seats": 1}, headers=headers).json()
            snapshot = http.post(f"/v1/tables/{table['id']}/start", headers=headers).json()
            for _ in range(moves):
                reply = http.post(
                    f"/v1/tables/{table['id']}/actions",
                    json={"expected_version": snapshot["version"], "action": _next(snapshot)},
                    headers=headers,
                )
                reply.raise_for_status()
                snapshot = reply.json()
            assert snapshot["status"] == "MATCH_STATUS_ACTIVE", snapshot["status"]
            ids.append(table["id"])
    client = redis.Redis.from_url(stack.redis_url)
    try:
        hashes = [  # the table's and the match's records and their history's head
            sum(client.memory_usage(key(i), samples=0) or 0 for key in (keys.table, keys.match, keys.history))
            for i in ids
        ]
        streams = [client.memory_usage(keys.events(i), samples=0) or 0 for i in ids]
        lengths = [client.xlen(keys.events(i)) for i in ids]
        shared = [
            len(keys.clock_member(i, 0)) + 8 + len(i)  # a clock member and its score, an active-set member
            for i in ids
        ]
    finally:
        client.close()
    return Memory(
        matches,
        moves,
        statistics.median(hashes),
        statistics.median(streams),
        statistics.median(lengths),
        statistics.median(shared),
    )


def describe(memory: Memory) -> str:
    per_match = memory.hash_bytes + memory.shared_bytes
    return (
        f"Redis memory ({memory.matches} active solo Yatzy matches after {memory.moves} moves, MEMORY USAGE, "
        f"medians): table, match and history hashes {memory.hash_bytes:,.0f} B + clock/active members "
        f"~{memory.shared_bytes:.0f} B "
        f"= {per_match:,.0f} B per active match (goal ≤ 2,048); events stream {memory.events_bytes:,.0f} B "
        f"for {memory.events:.0f} events = {memory.per_event:.0f} B per event"
    )
