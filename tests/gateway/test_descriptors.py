"""The gateway serves a game from its Describe alone: the descriptors a
game's service sends (GameInfo.descriptors) give the gateway the game's
messages — parsed strictly from a client's JSON, printed as proto3 JSON —
in a process that cannot import the game's generated stubs at all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from google.protobuf import descriptor_pb2

from services.kit.game import discover
from tests.conftest import TEST_PACKAGES

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter where importing any game's stubs fails.
PROGRAM = r"""
import sys
from importlib.abc import MetaPathFinder

class NoGameStubs(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        parts = name.split(".")
        if len(parts) >= 2 and parts[0] == "rodada" and parts[1] not in ("common", "platform"):
            raise ImportError(f"{name}: the gateway imports no game's stubs")
        return None

sys.meta_path.insert(0, NoGameStubs())
from google.protobuf import any_pb2
from rodada.common.v1 import match_pb2
from gateway.games import GameClient, game_messages
from gateway.protojson import message_json
from services.core.errors import Refused

info = match_pb2.GameInfo.FromString(sys.stdin.buffer.read())
game = GameClient(info, game_messages(info), None)
action = game.parse("Action", {"take": {"stones": 2}})
print(action.take.stones)
try:
    game.parse("Action", {"take": {"stones": "two"}})
except Refused as refused:
    print(refused.reason)
view = any_pb2.Any()
view.Pack(game.message("View")(heap=5, max_take=3, taken=[4, 6]))
print(message_json(view))
games = ("common", "platform")
print(sorted(m for m in sys.modules if m.startswith("rodada.") and m.split(".")[1] not in games))
"""


def test_the_descriptors_hold_the_game_and_its_imports() -> None:
    for game in discover(TEST_PACKAGES).values():
        files = descriptor_pb2.FileDescriptorSet.FromString(game.info().descriptors).file
        names = [f.name for f in files]
        assert names[-1] == f"rodada/{game.name}/v1/{game.name}.proto", names
        for index, file in enumerate(files):  # each file after the files it imports
            assert set(file.dependency) <= set(names[:index]), (file.name, file.dependency)


def test_a_game_served_without_its_stubs() -> None:
    info = discover(TEST_PACKAGES)["nim"].info()
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM],
        input=info.SerializeToString(),
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    stones, refused, view, loaded = done.stdout.decode().splitlines()
    assert stones == "2" and refused == "malformed_action"
    assert view == (
        "{'@type': 'type.googleapis.com/rodada.nim.v1.View', 'heap': 5, 'max_take': 3, 'taken': [4, 6]}"
    )
    assert loaded == "[]"
