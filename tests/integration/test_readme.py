"""The README's walkthroughs, run as they are written against a real stack:
with curl over HTTP (two players, a table, an invite, moves and refusals;
then, once Ana is an admin, a tournament announced, entered and started),
and with grpcurl over gRPC alone (a whole Yatzy game and the feed); and the moderation walkthrough (report,
take, mute, remove, ban, the audit log) in curl and in grpcurl."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tools.stack import Stack

README = Path(__file__).resolve().parents[2] / "README.md"


def block(heading: str, containing: str = "") -> str:
    """The first sh block after ``heading`` (that contains ``containing``)."""
    text = README.read_text()
    section = text[text.index(heading) :]
    found = next((b for b in re.findall(r"```sh\n(.*?)```", section, re.S) if containing in b), None)
    assert found, f"no sh block under {heading!r}"
    return str(found)


def walkthrough() -> str:
    return block("### A mobile walkthrough with grpcurl")


def test_the_curl_walkthroughs_play_and_announce_a_tournament(tmp_path: Path) -> None:
    play = block("## Play Yatzy with curl")
    tournament = block("**Leagues.**", containing="/v1/tournaments")
    # What the README says in words between the two: grant Ana the admin
    # role, and log her in again for a token that carries it.
    grant = (
        f"{sys.executable} -m tools.admin grant ana\n"
        "ANA=$(curl -s -X POST $GW/v1/auth/login -H 'content-type: application/json' "
        """-d '{"username": "ana", "password": "correct horse"}' | jq -r .access_token)\n"""
    )
    with Stack(tmp_path, games=["yatzy", "bozo"]) as stack:
        env = {**os.environ, "GW": stack.gateway(), "REDIS_URL": stack.redis_url}
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", f"{play}\n{grant}\n{tournament}"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert '"ana"' in out and '"bia"' in out, out  # both at the table
    assert '"version": 1' in out and '"dice"' in out and '"scores"' in out, out  # the start, the moves
    assert '"code":"stale_version"' in out and '"code":"not_your_turn"' in out, out
    assert ": admin" in out, out  # the grant
    assert '"entrant":' in out, out  # Caio registered


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


def test_the_moderation_walkthroughs_run_on_both_faces(tmp_path: Path) -> None:
    heading = "## Moderation"
    curl, grpcurl = block(heading, containing="curl -s"), block(heading, containing="grpcurl -plaintext")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # python, grpcurl
    with Stack(tmp_path, games=["yatzy"]) as stack:
        outputs = []
        for script, gateway in ((curl, stack.gateway()), (grpcurl, stack.platform_grpc())):
            env = {**os.environ, "GW": gateway, "REDIS_URL": stack.redis_url, "PATH": path}
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", script],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            outputs.append(done.stdout.splitlines())
    by_http, by_grpc = outputs
    audit = "resolve_report ban remove_message mute take_report grant_moderator"
    # (the gRPC run's log, newest first, continues with the curl run's)
    assert by_http[-1] == audit and by_grpc[-1].startswith(audit + " " + audit), (by_http, by_grpc)
    for lines in outputs:
        assert '{"status":"REPORT_STATUS_TAKEN","text":"rude words"}' in lines, lines
        assert "muted" in lines and "0" in lines, lines  # the mute refused; the message gone
    assert "401" in by_http and "banned" in by_http and "REPORT_STATUS_RESOLVED" in by_http, by_http
    assert "Unauthenticated" in by_grpc and "REPORT_STATUS_RESOLVED" in by_grpc, by_grpc
