"""``make soak``: many conflicting actions at once, then an audit of every match.

On loopback only, bounded in time: a stack with three replicas of the Yatzy
service and two gateways; ``MATCHES`` solo matches, each raced by ``RACERS``
clients that send, through alternating gateways, a different legal action
for the same version at the same moment. Exactly one may win each version;
the others must be refused ``stale_version``. Then every match is audited
from what Redis holds:

- every acknowledged action is there, once: the versions acknowledged are
  exactly 2…final, none twice (version 1 is the start);
- versions and event ids are contiguous, each event's version in order;
- a replay from the revealed seed, through the kit, of the acknowledged
  actions in version order gives the stored state and generator counters.

It prints the figures and exits non-zero on any violation. ``WORKERS=2
make soak``: every replica and gateway as a pod of two processes.
"""

from __future__ import annotations

import asyncio
import copy
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import redis
from rodada.common.v1 import match_pb2

from services.core import keys
from services.kit import play
from services.kit.engine import Context
from services.kit.play import Table
from services.kit.rng import MatchRng, cpu_seed
from services.yatzy.game import GAME
from tools.stack import Stack

MATCHES = 120
RACERS = 3
GATEWAYS = 2
REPLICAS = 3
TIME_LIMIT_SECONDS = 300


@dataclass
class Race:
    """One match and what its racers were told."""

    table_id: str
    token: str
    acked: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (new version, action)
    refused: Counter[str] = field(default_factory=Counter)
    attempts: int = 0
    finished: bool = False


def choices(view: dict[str, Any]) -> list[dict[str, Any]]:
    """A different legal action per racer for the same view."""
    preview = view["preview"]
    if not view["dice"]:
        return [{"roll": {}}] * RACERS
    best = max(preview, key=lambda p: p["points"])["box"]
    options: list[dict[str, Any]] = [{"score": {"box": best}}, {"score": {"box": preview[-1]["box"]}}]
    if view["throws_left"]:
        options = [{"roll": {"keep": [0]}}, {"score": {"box": best}}, {"roll": {}}]
    return [options[i % len(options)] for i in range(RACERS)]


async def race(clients: list[httpx.AsyncClient], match: Race, deadline: float) -> None:
    headers = {"authorization": f"Bearer {match.token}"}
    snap = (await clients[0].get(f"/v1/tables/{match.table_id}/view", headers=headers)).json()
    while snap["status"] == "MATCH_STATUS_ACTIVE" and time.monotonic() < deadline:
        version = snap["version"]
        actions = choices(snap["view"])
        replies = await asyncio.gather(
            *(
                clients[i % len(clients)].post(
                    f"/v1/tables/{match.table_id}/actions",
                    json={"expected_version": version, "action": action},
                    headers=headers,
                )
                for i, action in enumerate(actions)
            )
        )
        match.attempts += len(replies)
        answered = list(zip(replies, actions, strict=True))
        winners = [(reply, action) for reply, action in answered if reply.is_success]
        for reply, _ in answered:
            if not reply.is_success:
                match.refused[reply.json()["error"]["code"]] += 1
        for reply, action in winners:
            match.acked.append((reply.json()["version"], action))
        if winners:
            snap = winners[0][0].json()
        else:  # every racer lost to nobody: read the state again (the audit finds why)
            snap = (await clients[0].get(f"/v1/tables/{match.table_id}/view", headers=headers)).json()
    match.finished = snap["status"] == "MATCH_STATUS_FINISHED"


def audit(store: redis.Redis, match: Race) -> list[str]:
    """What is wrong with one match, if anything."""
    problems = []
    raw = store.hgetall(keys.match(match.table_id))
    version, last_event = int(raw[b"v"]), int(store.hget(keys.history(match.table_id), "e") or 0)
    doc = orjson.loads(raw[b"doc"])
    acked_versions = Counter(v for v, _ in match.acked)
    if twice := sorted(v for v, n in acked_versions.items() if n > 1):
        problems.append(f"versions acknowledged twice: {twice}")
    if sorted(acked_versions) != list(range(2, version + 1)):
        missing = sorted(set(range(2, version + 1)) - set(acked_versions))
        extra = sorted(set(acked_versions) - set(range(2, version + 1)))
        problems.append(f"acknowledged vs stored: missing {missing[:5]}, beyond the match {extra[:5]}")
    entries: list[tuple[bytes, dict[bytes, bytes]]] = store.xrange(keys.events(match.table_id))  # type: ignore[assignment]
    ids = [int(entry_id.decode().split("-", 1)[1]) for entry_id, _ in entries]
    if ids != list(range(1, last_event + 1)):
        problems.append("event ids not contiguous")
    versions = [match_pb2.MatchEvent.FromString(fields[b"d"]).version for _, fields in entries]
    if versions != sorted(versions) or set(range(1, version + 1)) - set(versions):
        problems.append("event versions out of order or missing")
    # The replay: the revealed seed, the start, the acknowledged actions in order.
    seed = bytes.fromhex(doc["seed"])
    rng, cpu_rng = MatchRng(seed), MatchRng(cpu_seed(seed))
    table, _ = play.start(GAME, len(doc["players"]), doc["options"], Context(rng, 0.0, 0.0), [], cpu_rng)
    for _, action in sorted(match.acked, key=lambda acked: acked[0]):
        play.act(GAME, table, 0, copy.deepcopy(action), Context(rng, 0.0, 0.0), cpu_rng)
    stored = Table.from_doc(doc)
    if table.state != stored.state or rng.counter != doc["rng"] or cpu_rng.counter != doc["cpu_rng"]:
        problems.append("the replay from the seed differs from the stored state")
    return problems


async def soak(stack: Stack) -> int:
    gateways = [stack.gateway(i) for i in range(GATEWAYS)]
    limits = httpx.Limits(max_connections=MATCHES * RACERS)
    clients = [httpx.AsyncClient(base_url=url, timeout=30, limits=limits) for url in gateways]
    try:
        matches = []
        for i in range(MATCHES):
            http = clients[i % GATEWAYS]
            token = (await http.post("/v1/auth/guest", json={"name": f"soak{i}"})).json()["access_token"]
            headers = {"authorization": f"Bearer {token}"}
            made = await http.post("/v1/tables", json={"game": "yatzy", "seats": 1}, headers=headers)
            table = made.json()
            started = await http.post(f"/v1/tables/{table['id']}/start", headers=headers)
            assert started.is_success, started.text
            matches.append(Race(table["id"], token))
        began = time.monotonic()
        await asyncio.gather(*(race(clients, m, began + TIME_LIMIT_SECONDS) for m in matches))
        elapsed = time.monotonic() - began
    finally:
        for client in clients:
            await client.aclose()

    attempts = sum(m.attempts for m in matches)
    acked = sum(len(m.acked) for m in matches)
    refused: Counter[str] = sum((m.refused for m in matches), Counter())
    store = redis.Redis.from_url(stack.redis_url)
    problems = {m.table_id: audit(store, m) for m in matches}
    finished = sum(m.finished for m in matches)
    # The audit can fail: the first match with its last acknowledgement
    # forgotten must be reported.
    forgetful = Race(matches[0].table_id, "", matches[0].acked[:-1])
    assert audit(store, forgetful), "the audit missed a lost action"
    bad = {match_id: p for match_id, p in problems.items() if p}
    workers = f", {stack.gateway_workers} workers each" if stack.gateway_workers > 1 else ""
    print(f"\nsoak: {MATCHES} Yatzy matches × {RACERS} racers, {GATEWAYS} gateways", end="")
    print(f", {REPLICAS} replicas{workers}")
    print(f"  {attempts:,} actions sent in {elapsed:.1f} s ({attempts / elapsed:,.0f}/s)")
    print(f"  {acked:,} acknowledged; refused: {dict(refused)}")
    print(f"  {len(matches)} matches audited ({finished} played to the end): {len(bad)} with a violation")
    for match_id, found in list(bad.items())[:10]:
        print(f"    {match_id}: {'; '.join(found)}")
    unexpected = set(refused) - {"stale_version"}
    if unexpected:
        print(f"  unexpected refusals: {sorted(unexpected)}")
    return 1 if bad or unexpected or attempts < 10_000 or finished < len(matches) else 0


def main() -> None:
    # WORKERS=N (as for a pod): every replica and gateway runs N processes.
    workers = int(os.environ.get("WORKERS") or 1)
    with (
        tempfile.TemporaryDirectory() as root,
        Stack(Path(root), games=["yatzy"], replicas={"yatzy": REPLICAS}, gateway_workers=workers) as stack,
    ):
        sys.exit(asyncio.run(soak(stack)))


if __name__ == "__main__":
    main()
