"""The strength tools (tools/dudo_strength.py, tools/domino_strength.py) measure
what issue 17 asks: the CPU against the named bots, seeded, and their control
runs put a bot in the CPU's place. Small runs: the figures themselves come
from full runs (the tools print them)."""

from __future__ import annotations

import re

import pytest

from tools import domino_strength, dudo_strength


def figures(text: str) -> list[str]:
    """The printed lines but the timing."""
    return [line for line in text.splitlines() if "ms/game" not in line and "ms a match" not in line]


def test_dudo_runs_replay_exactly_and_the_control_has_no_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["--games", "12"], ["--games", "12", "--control"]):
        dudo_strength.main(args)
        first = capsys.readouterr().out
        dudo_strength.main(args)
        assert figures(capsys.readouterr().out) == figures(first)
    dudo_strength.main(["--games", "12"])
    with_cpu = capsys.readouterr().out
    assert "Dudo CPU vs random bidder + 2 expected-count bidders, 4 players" in with_cpu
    assert first.startswith("CONTROL: expected-count bidder in the CPU's seat")
    assert re.search(r"games 12 .*95% CI \[\d+\.\d%, \d+\.\d%\]", with_cpu)


def test_the_dudo_bots_play_every_seat_they_are_given() -> None:
    """In a control game every seat is a bot and the game still ends: the
    expected-count and random bidders only make legal moves (the kit refuses
    any other)."""
    tally = dudo_strength.Tally()
    for number in range(8):
        dudo_strength.play_game(number, 7, 2, tally, control=True)
    assert tally.games == 8 and sum(tally.places) == 8


def test_domino_runs_replay_exactly_and_the_control_has_no_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["--matches", "4"], ["--matches", "4", "--control"]):
        domino_strength.main(args)
        first = capsys.readouterr().out
        domino_strength.main(args)
        assert figures(capsys.readouterr().out) == figures(first)
    assert first.startswith("CONTROL") and "matches to 50" in first
