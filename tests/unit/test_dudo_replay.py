"""A replay of a seed gives the same dice: the first opener's draw, then every
round's throw seat by seat, die by die (a voided round's rethrow included).
The values pinned here were computed with the engine as it was before the
kit's conversion (``DudoEngine``), so a change of draw order fails them."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from services.dudo.game import GAME
from services.kit import play
from services.kit.engine import Context, Event
from services.kit.play import Happening, Table
from services.kit.rng import MatchRng

NOW = 1_000.0

# Seed SHA-256("dudo pinned dice"), four seats of five dice.
PINNED_OPENER = 2
PINNED_ROUNDS = [
    # (round, opener, every seat's dice)
    (1, 2, [[5, 3, 1, 4, 3], [1, 5, 4, 4, 4], [2, 1, 6, 5, 1], [2, 1, 6, 2, 3]]),
    (2, 3, [[3, 1, 5, 4, 5], [2, 5, 2, 1, 1], [6, 5, 4, 5, 1], [2, 6, 6, 1]]),
    (3, 0, [[1, 4, 4, 4], [2, 4, 6, 1, 1], [1, 4, 6, 5, 3], [3, 6, 3, 4]]),
    (4, 1, [[], [3, 3, 1, 2, 6], [1, 3, 3, 3, 1], [1, 3, 5, 3]]),  # round 3 voided: seat 0 left
]


def _round(table: Table) -> tuple[int, int, list[list[int]]]:
    state = table.state
    return state["round"], state["opener"], [list(dice) for dice in state["dice"]]


def _rolled(happened: list[Happening]) -> list[tuple[int, int, list[int]]]:
    return [
        (e.data["round"], e.data["seat"], e.data["dice"])
        for e in happened
        if isinstance(e, Event) and e.kind == "dice_rolled"
    ]


def test_the_first_rounds_of_a_seed_throw_the_pinned_dice() -> None:
    rng = MatchRng(hashlib.sha256(b"dudo pinned dice").digest())
    table, happened = play.start(GAME, 4, {"dice_per_player": 5}, Context(rng, NOW, NOW))
    assert table.state["opener"] == PINNED_OPENER
    rounds = [_round(table)]
    rolled = _rolled(happened)

    def act(action: dict[str, Any]) -> None:
        (seat,) = GAME.to_act(table.state)
        rolled.extend(_rolled(play.act(GAME, table, seat, action, Context(rng, NOW, NOW))))

    # Round 1 and 2: the opener bids one 2 (one 3), the next player calls Dudo and loses a die.
    for face in (2, 3):
        act({"bid": {"quantity": 1, "face": face}})
        act({"dudo": {}})
        rounds.append(_round(table))
    # Round 3: the opener bids and leaves: the round is voided and thrown again.
    act({"bid": {"quantity": 1, "face": 4}})
    assert table.state["bidder"] == 0
    rolled.extend(_rolled(play.leave(GAME, table, 0, Context(rng, NOW, NOW))))
    rounds.append(_round(table))

    assert rounds == PINNED_ROUNDS
    # Each seat's private DiceRolled events say the same, and nothing else was drawn.
    assert rolled == [(r, s, dice) for r, _, hands in PINNED_ROUNDS for s, dice in enumerate(hands) if dice]
    assert rng.counter == 1 + 20 + 19 + 18 + 14


def test_a_whole_seeded_game_throws_the_pinned_dice() -> None:
    """Five seats, palifico and calza on, a fixed way of playing: 25 rounds and
    91 throws, hashed."""
    rng = MatchRng(hashlib.sha256(b"dudo pinned game").digest())
    options = {"dice_per_player": 5, "palifico": True, "calza": True}
    table, happened = play.start(GAME, 5, options, Context(rng, NOW, NOW))
    rolled = _rolled(happened)
    moves = 0
    while GAME.outcome(table.state) is None:
        rolled += _rolled(play.act(GAME, table, *_fixed_move(table), Context(rng, NOW, NOW)))
        moves += 1
    digest = hashlib.sha256(json.dumps([[r, s, d] for r, s, d in rolled]).encode()).hexdigest()
    assert (table.state["round"], moves, len(rolled), rng.counter) == (25, 128, 91, 334)
    assert digest == "14c55a64e5dec443d69bc7a7c7e35129bf9bd56246e1c83b5f3959b0d08e3576"
    result = GAME.outcome(table.state)
    assert result is not None and result.ranks == [3, 2, 5, 1, 4]


def _fixed_move(table: Table) -> tuple[int, dict[str, Any]]:
    """Open on one die of a face that changes each round, raise that face by
    one while below a third of the dice in play, then calza every third
    round, else Dudo."""
    state = table.state
    (seat,) = GAME.to_act(state)
    standing = state["bid"]
    if standing is None:
        return seat, {"bid": {"quantity": 1, "face": 2 + state["round"] % 5}}
    if standing["quantity"] < sum(state["counts"]) // 3:
        return seat, {"bid": {"quantity": standing["quantity"] + 1, "face": standing["face"]}}
    return seat, {"calza": {}} if state["round"] % 3 == 0 else {"dudo": {}}
