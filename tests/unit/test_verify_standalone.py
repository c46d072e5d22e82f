"""The verifier stands alone: it imports only the standard library and its
own modules, runs from a copy outside the repository with no site packages,
and answers by exit code (0 verified, 1 not)."""

from __future__ import annotations

import ast
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

from services.kit.game import discover
from tests.conftest import TEST_PACKAGES
from tests.records import SPECTATOR, random_match

VERIFIER = Path(__file__).resolve().parents[2] / "tools" / "verify"


REPLAYS = sorted((VERIFIER.parents[1] / "services").glob("*/verify.py"))  # each game's, in its folder


def test_the_verifier_imports_only_the_standard_library_and_itself() -> None:
    modules = sorted(VERIFIER.glob("*.py"))
    assert len(modules) >= 5 and len(REPLAYS) == 5
    for module in [*modules, *REPLAYS]:
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:  # from .record import …: its own modules
                    continue
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                mine = name == "tools.verify" or name.startswith("tools.verify.")
                assert top in sys.stdlib_module_names or top == "__future__" or mine, (
                    f"{module} imports {name}"
                )


def _record(tmp_path: Path) -> tuple[Path, list[dict[str, object]]]:
    record = random_match(discover()["domino"], 4, rnd=random.Random(5), cpu_seats=(1, 3))
    items = record.feed(SPECTATOR)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path, items


def _run(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    # -E ignores PYTHONPATH and the like, -S leaves out site-packages: only
    # the standard library and what the working directory holds.
    return subprocess.run(
        [sys.executable, "-E", "-S", "-m", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_copy_outside_the_repository_verifies_a_record(tmp_path: Path) -> None:
    """The verifier copied out, with the games' replays in its games/."""
    copy = tmp_path / "tools" / "verify"
    shutil.copytree(VERIFIER, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "games").mkdir()
    for replay in REPLAYS:
        shutil.copy(replay, copy / "games" / f"{replay.parent.name}.py")
    path, items = _record(tmp_path)
    done = _run(["tools.verify", str(path)], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("verified: domino match")

    # The same from stdin, and a tampered copy: exit 1 with the difference.
    assert _run(["tools.verify"], tmp_path, stdin=path.read_text()).returncode == 0
    played = next(i for i in items if "played" in i.get("event", {}).get("event", {}))
    played["event"]["event"]["played"]["seat"] = (played["event"]["event"]["played"]["seat"] + 1) % 4
    (tmp_path / "tampered.json").write_text(json.dumps(items))
    refused = _run(["tools.verify", str(tmp_path / "tampered.json")], tmp_path)
    assert refused.returncode == 1
    assert refused.stdout.startswith(f"NOT verified: event {played['event']['id']} (played, version ")
    assert "seat: expected" in refused.stdout


def test_the_command_in_the_repository(tmp_path: Path) -> None:
    """``python -m tools.verify`` as the README shows it, with --seed."""
    path, items = _record(tmp_path)
    seed = next(i["snapshot"]["fairness"]["seed"] for i in items if i.get("snapshot", {}).get("result"))

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tools.verify", *args],
            cwd=VERIFIER.parents[1],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    done = command(str(path), "--seed", seed)
    assert done.returncode == 0, done.stdout + done.stderr
    wrong = command(str(path), "--seed", "00" * 32)
    assert wrong.returncode == 1 and "fairness.seed_sha256" in wrong.stdout
    missing = command(str(tmp_path / "nothing.json"))
    assert missing.returncode == 1 and "cannot read the record" in missing.stderr


def test_a_game_without_a_replay_is_said_so(tmp_path: Path) -> None:
    """Nim (tests/games/nim) has no verify.py: exit 2 and a clear sentence,
    not a KeyError."""
    record = random_match(discover(TEST_PACKAGES)["nim"], 2, rnd=random.Random(1))
    path = tmp_path / "nim.json"
    path.write_text(json.dumps(record.feed(SPECTATOR)), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "tools.verify", str(path)],
        cwd=VERIFIER.parents[1],
        env={**os.environ, "GAME_PACKAGES": ",".join(TEST_PACKAGES)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot verify: no replay for 'nim'" in done.stderr and "Traceback" not in done.stderr
    assert "games with a replay: bozo, bozu_mekuri, domino, dudo, yatzy" in done.stderr
