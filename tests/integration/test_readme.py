"""The README's grpcurl walkthrough, run as it is written against a real
stack: two players, a table, an invite, a whole Yatzy game and the feed,
over gRPC alone."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tools.stack import Stack

README = Path(__file__).resolve().parents[2] / "README.md"


def walkthrough() -> str:
    text = README.read_text()
    section = text[text.index("### A mobile walkthrough with grpcurl") :]
    found = re.search(r"```sh\n(.*?)```", section, re.S)
    assert found, "no sh block in the grpcurl walkthrough"
    return found.group(1)


def test_the_grpcurl_walkthrough_plays_a_whole_game(tmp_path: Path) -> None:
    with Stack(tmp_path, games=["yatzy"]) as stack:
        env = {
            **os.environ,
            "GW": stack.platform_grpc(),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # grpcurl
        }
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", walkthrough()],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert "rodada.platform.v1.PlatformService" in lines and "grpc.reflection.v1.ServerReflection" in lines
    assert "rodada.platform.v1.SocialService" in lines and "rodada.platform.v1.CompetitionService" in lines
    (players,) = [line for line in lines if line.startswith('["')]  # the table after Bia joined
    assert json.loads(players)[1] == "Bia"
    (result,) = [json.loads(line) for line in lines if line.startswith('{"status"')]
    assert result["status"] == "MATCH_STATUS_FINISHED" and len(result["scores"]) == 2
    assert sorted(result["ranks"]) in ([1, 2], [1, 1])
    # The feed of the finished table: its history (a turn is at least a turn
    # start, a throw and a score), then the state to draw from.
    feed = dict(reversed(line.split()) for line in lines[-2:])  # "  N kind" lines of uniq -c
    assert int(feed['"event"']) >= 3 * 26 and int(feed['"snapshot"']) == 1, feed
