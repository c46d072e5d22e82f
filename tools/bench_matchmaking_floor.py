"""The floor under the matchmaking burst: what the gateway's HTTP and
WebSocket stack alone costs per ticket, with nothing behind it.

A bare ASGI app served as the gateway serves (gateway/__main__.py: uvicorn
with its flags and ``FeedProtocol``, the gateway's JSON logs with their access
log, uvloop, the same young-generation threshold) answers the burst's driver
(``bench/rodada/matchmaking.js``) as the gateway would, byte for byte in
shape: ``POST /v1/matchmaking/tickets`` a ticket, and each ticket's WebSocket
its hello taken, a queue update, a matched update, the end and a close. No
token check, no Redis, no matcher: the gateway's CPU per ticket less this
floor's is what the gateway's own work costs.

``python -m tools.bench_matchmaking_floor serve PORT`` runs the app;
:func:`measure` runs it under the driver (``BENCH_FLOOR=1`` with
``python -m tools.bench_matchmaking``).
"""

from __future__ import annotations

import asyncio
import gc
import json
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from tools.redis_server import free_port, wait_for_port


def _ticket() -> bytes:
    return orjson.dumps(
        {
            "id": secrets.token_hex(16),
            "game": "bozo",
            "mode": "DUEL",
            "ranked": False,
            "options": {"mode": "MODE_DUEL"},
            "state": "waiting",
            "party": False,
            "members": [{"user_id": "g_floor", "name": "floor", "role": "guest"}],
            "created_at": 0.0,
            "enqueued_at": 0.0,
            "position": 1,
            "queue_length": 1,
            "waited_seconds": 0.0,
            "estimated_wait_seconds": 1.0,
        }
    )


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
    elif scope["type"] == "http":
        while (await receive()).get("more_body"):
            pass
        body = _ticket()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 201, "headers": headers})
        await send({"type": "http.response.body", "body": body})
    elif scope["type"] == "websocket":
        await receive()  # connect
        await send({"type": "websocket.accept"})
        hello = await receive()
        orjson.loads(hello.get("text") or b"{}")
        ticket = scope["path"].split("/")[4]
        for message in (
            {"ticket_id": ticket, "queue": {"state": "waiting", "position": 1, "queue_length": 1}},
            {"ticket_id": ticket, "matched": {"table_id": ticket, "seat": 0, "cpu_seats": []}},
            {"end": {"reason": "ticket_closed"}},
        ):
            await send({"type": "websocket.send", "text": orjson.dumps(message).decode()})
        await send({"type": "websocket.close", "code": 1000, "reason": "ticket_closed"})


def serve(port: int) -> None:
    import uvicorn
    import uvloop

    from gateway.__main__ import GC_YOUNG_THRESHOLD, uvicorn_config
    from gateway.settings import GatewaySettings
    from services.core import logs

    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    logs.configure("gateway")
    settings = GatewaySettings(gateway_host="127.0.0.1", gateway_port=port)
    uvloop.install()
    asyncio.run(uvicorn.Server(uvicorn_config(app, settings)).serve())


def measure(root: Path, tickets: int) -> dict[str, Any]:
    """The floor's CPU per ticket (ms) under the burst's driver, and the driver's."""
    from tools.bench_feeds import raise_open_files
    from tools.bench_matchmaking import DRIVER, cpu_seconds

    raise_open_files(tickets + 2000)
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = (root / "floor.log").open("ab")
    server = subprocess.Popen(
        [sys.executable, "-m", "tools.bench_matchmaking_floor", "serve", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(port, timeout=30)
        tokens = root / "floor-guests.json"
        tokens.write_text(json.dumps([{"user_id": f"g_floor{i}", "token": "-"} for i in range(tickets)]))
        used = cpu_seconds(server.pid)
        driver = ["node", str(DRIVER), "--gateway", f"http://127.0.0.1:{port}", "--tickets", str(tickets)]
        out = subprocess.run(
            [*driver, "--tokens", str(tokens)],
            stdout=subprocess.PIPE,
            text=True,
            timeout=900,
            check=True,
        ).stdout
        used = cpu_seconds(server.pid) - used
    finally:
        server.terminate()
        server.wait(15)
    burst = json.loads(out.strip().splitlines()[-1])
    return {
        "server_cpu_ms_per_ticket": round(used * 1000 / tickets, 3),
        "driver_cpu_ms_per_ticket": round(burst["driver_cpu_s"] * 1000 / tickets, 3),
        "seconds": burst["seconds"],
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(int(sys.argv[2]))
