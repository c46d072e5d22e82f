"""docs/fairness.md's worked example is true: its blocks, and what each game
makes of them, are what the platform's own generator and rules give, and its
record is verified (and refused once tampered) exactly as the page shows."""

from __future__ import annotations

import hashlib
import hmac
import re
from pathlib import Path

import pytest

from services.kit import play
from services.kit.engine import Context
from services.kit.game import discover
from services.kit.rng import MatchRng, cpu_seed, seed_digest
from tools.verify import Difference, verify_text

DOC = (Path(__file__).resolve().parents[2] / "docs" / "fairness.md").read_text(encoding="utf-8")
EXAMPLE = DOC[DOC.index("## Worked example") :]
SEED = hashlib.sha256(b"rodada fairness example").digest()
GAMES = discover()


def _start(name: str, seats: int, options: dict[str, object]) -> tuple[MatchRng, play.Table]:
    rng = MatchRng(SEED)
    table, _ = play.start(GAMES[name], seats, options, Context(rng, 0.0, 0.0))
    return rng, table


def test_the_seed_its_digest_and_the_cpu_key() -> None:
    assert f"seed         {SEED.hex()}" in EXAMPLE
    assert f"seed_sha256  {seed_digest(SEED)}" in EXAMPLE
    assert f"CPU key      {cpu_seed(SEED).hex()}" in EXAMPLE


def test_the_first_blocks() -> None:
    for block in range(8):
        digest = hmac.digest(SEED, block.to_bytes(8, "big"), "sha256")
        value = int.from_bytes(digest, "big")
        assert f"| {block} | `{digest.hex()}` | {value % 6} | {1 + value % 6} |" in EXAMPLE
    rng = MatchRng(SEED)
    first = [hmac.digest(SEED, b.to_bytes(8, "big"), "sha256") for b in range(8)]
    assert [rng.randint(1, 6) for _ in range(8)] == [1 + int.from_bytes(d, "big") % 6 for d in first]


def test_what_the_games_make_of_them() -> None:
    yatzy = GAMES["yatzy"]
    rng, table = _start("yatzy", 1, {})
    play.act(yatzy, table, 0, {"roll": {}}, Context(rng, 0.0, 0.0))
    assert "dice\n  `[5, 5, 1, 5, 2]`" in EXAMPLE and table.state["dice"] == [5, 5, 1, 5, 2]
    play.act(yatzy, table, 0, {"roll": {"keep": [0, 1, 3]}}, Context(rng, 0.0, 0.0))
    assert table.state["dice"] == [5, 5, 5, 5, 5] and "`[5, 5, 5, 5, 5]`, a Yatzy" in EXAMPLE

    _, table = _start("domino", 4, {})
    assert table.state["hands"][0] == [[0, 5], [1, 5], [2, 4], [2, 6], [3, 4], [4, 5], [5, 5]]
    assert [6, 6] in table.state["hands"][3] and table.state["turn"] == 3
    assert "0-5, 1-5, 2-4, 2-6, 3-4, 4-5, 5-5,\n  and seat 3 holds 6-6" in EXAMPLE

    rng, table = _start("bozu_mekuri", 4, {})
    assert table.state["deck"][:5] == [71, 98, 74, 86, 8] and table.state["to_act"] == 0
    assert rng.counter == 100 and "the deck starts 71, 98, 74, 86, 8" in EXAMPLE

    rng, table = _start("dudo", 2, {"dice_per_player": 1})
    assert table.state["opener"] == 0 and table.state["dice"] == [[5], [1]] and rng.counter == 3


def _record() -> str:
    (block,) = re.findall(r"```json\n(.*?)```", EXAMPLE, flags=re.DOTALL)
    return str(block)


def test_the_example_record_is_verified_as_shown() -> None:
    report = verify_text(_record())
    assert f"$ python -m tools.verify example.jsonl\n{report.text()}\n" in EXAMPLE


def test_the_tampered_example_is_refused_as_shown() -> None:
    tampered = _record().replace('{"seat": 1, "dice": [1]}', '{"seat": 1, "dice": [6]}')
    with pytest.raises(Difference) as raised:
        verify_text(tampered)
    assert f"NOT verified: {raised.value}" in EXAMPLE
