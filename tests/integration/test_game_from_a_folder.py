"""A game added from a folder outside the repository, as docs/adding-a-game.md
says: its proto, its rules, its declaration, its service and its rules pages
in a temporary package named in GAME_PACKAGES, its stubs generated there.
Nothing else changes: the stack starts its service, the gateway learns it
from Describe (messages from the descriptors it sends: the gateway has no
stubs for it), and it is played to the end on both faces from the legal
actions each snapshot lists, then in the terminal client on its generic
board. (The game is Nim under another name, "pebbles".)"""

from __future__ import annotations

import asyncio
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import any_pb2, descriptor_pool, json_format, message_factory
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

from services.kit.legal import expand
from tests.integration.grpc_client import bearer
from tests.integration.http_client import FINISHED, register, seated_table
from tools.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
NIM = ROOT / "tests" / "games" / "nim"
PACKAGE = "extra_games"


def _renamed(text: str) -> str:
    return (
        text.replace("tests.games.nim", f"{PACKAGE}.pebbles")
        .replace("rodada.nim.v1", "rodada.pebbles.v1")
        .replace("rodada/nim/v1;nimv1", "rodada/pebbles/v1;pebblesv1")
        .replace("Rodada.Nim.V1", "Rodada.Pebbles.V1")
        .replace("NimProto", "PebblesProto")
        .replace("nim_pb2", "pebbles_pb2")
        .replace("nim_last_stone", "pebbles_last_stone")
        .replace('name="nim"', 'name="pebbles"')
        .replace('title="Nim"', 'title="Pebbles"')
        .replace('"RNM"', '"RPB"')
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The new game's package, and its stubs, in a folder of their own."""
    root = tmp_path_factory.mktemp("new_game")
    game = root / PACKAGE / "pebbles"
    game.mkdir(parents=True)
    (root / PACKAGE / "__init__.py").write_text("")
    for name in ("__init__.py", "engine.py", "game.py", "service.py"):
        (game / name).write_text(_renamed((NIM / name).read_text()))
    shutil.copytree(NIM / "rules", game / "rules")
    proto = root / "protos" / "rodada" / "pebbles" / "v1" / "pebbles.proto"
    proto.parent.mkdir(parents=True)
    proto.write_text(_renamed((ROOT / "protos" / "rodada" / "nim" / "v1" / "nim.proto").read_text()))
    (root / "gen").mkdir()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{root / 'protos'}",
            f"--python_out={root / 'gen'}",
            f"{proto}",
        ],
        check=True,
    )
    sys.path[:0] = [str(root), str(root / "gen")]
    try:
        yield root
    finally:
        sys.path[:] = [p for p in sys.path if p not in (str(root), str(root / "gen"))]


@pytest.fixture(scope="module")
def stack(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    path = f"{folder}:{folder / 'gen'}"
    env = {"PYTHONPATH": path}
    with Stack(
        tmp_path_factory.mktemp("stack"), packages=("services", PACKAGE), games=["pebbles"], env=env
    ) as running:
        running.services()
        yield running


async def test_a_game_from_a_folder_plays_on_both_faces(stack: Stack) -> None:
    rnd = random.Random(3)
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as http:
        games = {g["name"]: g for g in (await http.get("/v1/games")).json()["games"]}
        assert set(games) == {"pebbles"} and games["pebbles"]["title"] == "Pebbles"
        assert {t["id"] for t in games["pebbles"]["trophies"]} == {"pebbles_last_stone"}
        rules = await http.get("/rules/en/pebbles")
        assert rules.status_code == 200 and "<h1>Nim</h1>" in rules.text
        schema = (await http.get("/openapi.json")).json()["components"]["schemas"]
        assert "rodada.pebbles.v1.Action" in schema

        ana, bia = await register(http, "ana"), await register(http, "bia")
        table_id, snap = await seated_table([ana, bia], "pebbles", {"heap": 9})
        players = {0: ana, 1: bia}
        async with grpc.aio.insecure_channel(stack.platform_grpc()) as channel:
            api = platform_pb2_grpc.PlatformServiceStub(channel)
            moves = 0
            while snap["status"] != FINISHED:
                (seat,) = snap["to_act"]
                player = players[seat]
                current = await player.view(table_id)
                action = rnd.choice(expand(current["legal"]))
                if moves % 2:  # every other move over gRPC, from the gRPC face's own list
                    reply = await api.GetView(
                        platform_pb2.GetViewRequest(table_id=table_id), metadata=bearer(player.token)
                    )
                    listed = expand(
                        json_format.MessageToDict(reply.match.legal, preserving_proto_field_name=True)
                    )
                    action = rnd.choice(listed)
                    request = platform_pb2.ActRequest(
                        table_id=table_id,
                        expected_version=reply.match.version,
                        action=_packed(reply.match, action),
                    )
                    done = await api.Act(request, metadata=bearer(player.token))
                    snap = json_format.MessageToDict(
                        done.match,
                        preserving_proto_field_name=True,
                        always_print_fields_with_no_presence=True,
                    )
                else:
                    snap = await player.act(table_id, current["version"], action)
                moves += 1
        assert snap["status"] == FINISHED and sorted(snap["result"]["ranks"]) == [1, 2] and moves >= 3


def _packed(match: match_pb2.Snapshot, action: dict[str, Any]) -> any_pb2.Any:
    """``action`` as the game's Action in an Any (the Action beside the View
    the snapshot's view names, from the process's descriptor pool)."""
    packed = any_pb2.Any()
    packed.Pack(json_format.ParseDict(action, _action_class(match)()))
    return packed


async def test_the_terminal_client_plays_it_on_its_generic_board(stack: Stack) -> None:
    """The terminal client lists the new game and plays it to the end, key by
    key, against a gRPC player: no client code for it."""
    from clients.terminal.app import RodadaTerminal
    from tests.terminal.bots import guest, play
    from tests.terminal.driving import (
        SIZE,
        board,
        choose_game,
        create_table,
        log_in_as_guest,
        move,
        my_turn,
        playing,
        screen,
        table_screen,
        until,
    )

    def one_stone(snap: match_pb2.Snapshot) -> Any:
        return json_format.ParseDict({"take": {"stones": 1}}, _action_class(snap)())

    address = stack.platform_grpc()
    app = RodadaTerminal(address)
    async with grpc.aio.insecure_channel(address) as channel, app.run_test(size=SIZE) as pilot:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        await log_in_as_guest(pilot, "tess")
        await choose_game(pilot, "pebbles", seats=2)
        table_id, code = await create_table(pilot)
        bia = await guest(api, "bia")
        await api.JoinTable(
            platform_pb2.JoinTableRequest(invite_code=code), metadata=bearer(bia.access_token)
        )
        await until(pilot, lambda: "bia" in screen(app), what="bia to sit down")
        bot = asyncio.create_task(play(api, bia.access_token, table_id, one_stone))
        await pilot.press("s")
        await until(pilot, lambda: playing(app), what="the match")
        while await my_turn(pilot):
            assert "heap:" in screen(app) and "Your move" in screen(app), screen(app)
            await move(pilot, "enter")
        await until(pilot, lambda: table_screen(app).over, what="the end")
        assert board(app).snap.status == match_pb2.MATCH_STATUS_FINISHED
        await asyncio.wait_for(bot, 30)


def _action_class(match: match_pb2.Snapshot) -> Any:
    name = match.view.type_url.split("/")[-1].rsplit(".", 1)[0] + ".Action"
    return message_factory.GetMessageClass(descriptor_pool.Default().FindMessageTypeByName(name))
