"""The fairness verifier accepts every finished match: random matches of all
five games played through the kit (tests/records.py), departures, claims,
deadlines and CPU seats included, as each seat and a spectator received
them. It must also read exactly the generator blocks the match read, and its
rules must agree with the games' own."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

from services.bozo import scoring as bozo_scoring
from services.bozo import verify as bozo
from services.bozu_mekuri import verify as bozu_mekuri
from services.bozu_mekuri.cards import CARDS, kind_under
from services.kit.game import discover
from services.yatzy import scoring as yatzy_scoring
from services.yatzy import verify as yatzy
from tests.records import SPECTATOR, random_match
from tools.verify import verify_text

GAMES = discover()

# (game, seats, options, CPU seats)
CONFIGS: list[tuple[str, int, dict[str, Any], tuple[int, ...]]] = [
    ("yatzy", 1, {}, ()),
    ("yatzy", 3, {"card": "SCANDINAVIAN"}, ()),
    ("yatzy", 5, {"card": "CLASSIC"}, ()),
    ("bozo", 1, {}, ()),
    ("bozo", 2, {}, ()),
    ("bozo", 4, {}, ()),
    ("dudo", 2, {"dice_per_player": 5}, ()),
    ("dudo", 4, {"palifico": True, "calza": True}, (1,)),
    ("dudo", 6, {"dice_per_player": 2, "open_on_ones": True, "calza": True, "palifico": True}, (0, 3)),
    ("domino", 4, {}, ()),
    ("domino", 4, {}, (1, 2, 3)),
    ("bozu_mekuri", 2, {}, ()),
    (
        "bozu_mekuri",
        4,
        {"semimaru": "SKIP_ONCE", "emperor": "TAKE_EVERYONES_CARDS", "lady": "FLIP_AGAIN_IF_PILE_EMPTY"},
        (2,),
    ),
    (
        "bozu_mekuri",
        6,
        {
            "semimaru": "EVERYONE_TO_PILE",
            "lady": "TAKE_PILE_AND_FLIP_AGAIN",
            "allow_stopping": False,
            "turn_timer_seconds": 30,
        },
        (0,),
    ),
    ("bozu_mekuri", 3, {"semimaru": "AS_MONK", "emperor": "ORDINARY", "turn_timer_seconds": 60}, ()),
]
MATCHES_EACH = 2


@pytest.mark.parametrize("departures", [0.0, 0.04], ids=["played-out", "with-departures"])
@pytest.mark.parametrize(("name", "seats", "options", "cpu_seats"), CONFIGS)
def test_every_viewer_of_a_random_match_is_verified(
    name: str, seats: int, options: dict[str, Any], cpu_seats: tuple[int, ...], departures: float
) -> None:
    rnd = random.Random(f"{name}-{seats}-{sorted(options.items())}-{departures}")
    for _ in range(MATCHES_EACH):
        record = random_match(
            GAMES[name], seats, options, rnd=rnd, cpu_seats=cpu_seats, departures=departures
        )
        for viewer in record.viewers():
            items = record.feed(viewer)
            report = verify_text(json.dumps(items))
            # Exactly the blocks the match's generator read, no more, no fewer.
            assert report.blocks == record.counter
            assert report.events == sum(1 for item in items if "event" in item)
            assert (report.game, report.viewer) == (name, viewer)


def test_a_record_as_json_lines_is_verified_too() -> None:
    record = random_match(GAMES["dudo"], 3, rnd=random.Random(3))
    lines = "\n".join(json.dumps(item) for item in record.feed(SPECTATOR))
    assert verify_text(lines).blocks == record.counter


def test_the_report_names_what_this_viewer_never_saw() -> None:
    """A spectator of Dudo sees no dice but the called rounds'; a seat sees
    its own too. What was never shown is named, not claimed verified."""
    rnd = random.Random(11)
    record = random_match(GAMES["dudo"], 4, {"dice_per_player": 2}, rnd=rnd, departures=0.1)
    spectator = verify_text(json.dumps(record.feed(SPECTATOR)))
    seat = verify_text(json.dumps(record.feed(0)))
    assert spectator.unshown, "some dice never came to a call"
    assert len(seat.unshown) <= len(spectator.unshown)
    assert all("dice" in note for note in spectator.unshown)


# -- the verifier's rules are the games' rules -------------------------------------


ALL_DICE = [list(dice) for dice in itertools.product(range(1, 7), repeat=5)]


@pytest.mark.parametrize("card", ["CLASSIC", "SCANDINAVIAN"])
def test_yatzy_scores_as_the_game_does(card: str) -> None:
    assert yatzy.CARDS[card] == yatzy_scoring.boxes(card)
    for dice in ALL_DICE:
        for box in yatzy_scoring.boxes(card):
            assert yatzy.points(card, box, dice) == yatzy_scoring.score(card, box, dice), (box, dice)


def test_bozo_scores_as_the_game_does() -> None:
    for dice in ALL_DICE:
        for box in bozo_scoring.BOXES:
            for first in (True, False):
                assert bozo.points(box, dice, first) == bozo_scoring.points(box, dice, first), (box, dice)


def test_the_bozu_mekuri_cards_are_the_games() -> None:
    for number, card in CARDS.items():
        assert bozu_mekuri.category(number) == card["category"]
        assert (number in bozu_mekuri.EMPERORS) == card["emperor"]
    assert sorted(CARDS) == list(range(1, bozu_mekuri.CARDS + 1))
    for semimaru, emperor in itertools.product(
        ["OUT_AT_ONCE", "SKIP_ONCE", "AS_MONK", "AS_NOBLE", "EVERYONE_TO_PILE"],
        ["KEEP_AND_FLIP_AGAIN", "TAKE_EVERYONES_CARDS", "ORDINARY"],
    ):
        options = {"semimaru": semimaru, "emperor": emperor}
        for number in CARDS:
            assert bozu_mekuri.acts_as(number, options) == kind_under(number, options)
