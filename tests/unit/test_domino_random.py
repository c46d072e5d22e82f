"""Dominó over many random matches, played through the kit: a referee that
knows only the events and the rules (written again here, independently of the
engine) follows each match and checks every step; hypothesis drives moves and
malformed input.

Matches are played by ``play_match`` with moves chosen at random among the
legal ones; each match is seeded with its own MatchRng.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.domino.game import GAME
from services.kit import play
from services.kit.engine import JSON, EndReason, Event, RulesError
from services.kit.play import Happening, Table
from services.kit.rng import MatchRng
from tests.rigged import ctx

Tile = tuple[int, int]
ALL_TILES = sorted((a, b) for a in range(7) for b in range(a, 7))
ALL_TILE_SET = set(ALL_TILES)
TARGET = 50


def norm(tile: JSON) -> Tile:
    a, b = tile["a"], tile["b"]
    return (a, b) if a <= b else (b, a)


def fits(tile: Tile, ends: tuple[int, int]) -> dict[str, tuple[int, int]]:
    """The rules again: each end the tile joins, and the open ends it leaves."""
    left, right = ends
    result = {}
    if left in tile:
        result["LEFT"] = (tile[0] + tile[1] - left, right)
    if right in tile:
        result["RIGHT"] = (left, tile[0] + tile[1] - right)
    return result


def touches(tile: Tile, ends: tuple[int, int]) -> bool:
    return ends[0] in tile or ends[1] in tile


def pips(tiles: Any) -> int:
    return sum(a + b for a, b in tiles)


class Referee:
    """Follows one match from its events and checks them against the rules."""

    def __init__(self, events: list[Happening]) -> None:
        self.round = 0
        self.scores = [0, 0]
        self.over = False
        self.winner: int | None = None
        self.rounds_ended: list[str] = []
        self.hands: list[set[Tile]] = []
        self.expected_opener: int | None = None
        self.expect_round(events)

    # --- a new deal

    def expect_round(self, events: list[Happening]) -> None:
        assert all(isinstance(e, Event) for e in events), "no kit notice while playing"
        started, *dealt = events
        assert isinstance(started, Event) and started.kind == "round_started" and started.audience is None
        assert [e.kind for e in dealt] == ["dealt"] * 4
        assert [e.audience for e in dealt] == [(0,), (1,), (2,), (3,)]
        self.round += 1
        self.hands = [{norm(t) for t in e.data["tiles"]} for e in dealt if isinstance(e, Event)]
        assert all(len(hand) == 7 for hand in self.hands)
        assert sorted(t for hand in self.hands for t in hand) == ALL_TILES, "all 28 dealt, no boneyard"
        opener = started.data["opener"]
        if self.round == 1:
            assert (6, 6) in self.hands[opener]
            assert started.data["opening_tile"] == {"a": 6, "b": 6}
        else:
            assert opener == self.expected_opener
            assert "opening_tile" not in started.data
        assert started.data["round"] == self.round and started.data["scores"] == self.scores
        self.ends: tuple[int, int] | None = None
        self.line = 0
        self.turn = opener
        self.last_play: list[int | None] = [None, None]

    def legal(self, seat: int) -> dict[Tile, dict[str, tuple[int, int]]]:
        if self.ends is None:
            if self.round == 1:
                return {(6, 6): {}}
            return {tile: {} for tile in self.hands[seat]}
        moves = {tile: fits(tile, self.ends) for tile in self.hands[seat]}
        return {tile: ends for tile, ends in moves.items() if ends}

    # --- one accepted play and everything it caused

    def follow(self, seat: int, events: list[Happening], legal: dict[Tile, Any] | None = None) -> None:
        """Check the events of ``seat``'s play (``legal``: its legal plays, if known)."""
        assert not self.over and seat == self.turn
        assert all(isinstance(e, Event) for e in events), "no kit notice while playing"
        queue: Iterator[Any] = iter(events)
        played = next(queue)
        assert played.kind == "played" and played.audience is None
        data = played.data
        tile = norm(data["tile"])
        assert tile in (self.legal(seat) if legal is None else legal), "every play is legal"
        if self.ends is None:
            assert "end" not in data
            new_ends = (data["tile"]["a"], data["tile"]["b"])
        else:
            new_ends = fits(tile, self.ends)[data["end"]]
            joined = data["tile"]["b"] if data["end"] == "LEFT" else data["tile"]["a"]
            assert joined == (self.ends[0] if data["end"] == "LEFT" else self.ends[1])
        assert (data["left_end"], data["right_end"]) == new_ends
        assert data["order"] == self.line
        self.hands[seat].remove(tile)
        assert data["tiles_left"] == len(self.hands[seat])
        self.ends, self.line = new_ends, self.line + 1
        self.last_play[seat % 2] = seat

        if not self.hands[seat]:
            self.end_round(queue, "BATIDA", seat)
        elif not any(touches(t, new_ends) for hand in self.hands for t in hand):
            self.end_round(queue, "TRANCA", seat)
        else:
            self.turn = (seat + 1) % 4
            while not any(touches(t, new_ends) for t in self.hands[self.turn]):
                passed = next(queue)  # every forced pass happens, and only those
                assert passed.kind == "passed" and passed.audience is None
                assert passed.data == {
                    "seat": self.turn,
                    "left_end": new_ends[0],
                    "right_end": new_ends[1],
                    "line_length": self.line,
                }
                self.turn = (self.turn + 1) % 4
            assert next(queue, None) is None

    def end_round(self, queue: Iterator[Event], kind: str, seat: int) -> None:
        ended = next(queue)
        assert ended.kind == "round_ended" and ended.audience is None
        data = ended.data
        team_pips = [pips(self.hands[0] | self.hands[2]), pips(self.hands[1] | self.hands[3])]
        if kind == "BATIDA":
            winner = seat % 2
        elif team_pips[0] != team_pips[1]:
            winner = 0 if team_pips[0] < team_pips[1] else 1
        else:
            winner = 1 - seat % 2  # the blocking team loses a tie
        points = team_pips[1 - winner]
        if kind == "BATIDA":
            opponents = [s for s in range(4) if s % 2 != seat % 2]
            assert points == pips(self.hands[opponents[0]]) + pips(self.hands[opponents[1]])
        self.scores[winner] += points
        assert data["kind"] == kind and data["seat"] == seat and data["round"] == self.round
        assert (data["winning_team"], data["points"], data["team_pips"]) == (winner, points, team_pips)
        assert data["scores"] == self.scores
        assert [{norm(t) for t in h["tiles"]} for h in data["hands"]] == self.hands
        assert [h["pips"] for h in data["hands"]] == [pips(h) for h in self.hands]
        self.rounds_ended.append(kind)
        if self.scores[winner] >= TARGET:
            # The end is the kit's (the final event's Result): no game event follows.
            assert "next_opener" not in data
            assert next(queue, None) is None
            self.over = True
            self.winner = winner
            return
        last = self.last_play[winner]
        self.expected_opener = seat if kind == "BATIDA" else last
        assert data["next_opener"] == self.expected_opener
        self.expect_round(list(queue))


def new_table(seed: int) -> tuple[Table, list[Happening], MatchRng]:
    rng = MatchRng(seed.to_bytes(32, "big"))
    table, happened = play.start(GAME, 4, {}, ctx(rng))
    return table, happened, rng


def conserved(state: JSON) -> bool:
    tiles = [placed["tile"] for placed in state["line"]] + [tile for hand in state["hands"] for tile in hand]
    return len(tiles) == 28 and {(min(t), max(t)) for t in tiles} == ALL_TILE_SET


def choose(view: JSON, pick: Callable[[int], int]) -> JSON:
    """A legal play from the view: a random tile, and an end when one is needed or at random."""
    option = view["playable"][pick(len(view["playable"]))]
    body: JSON = {"tile": dict(option["tile"])}
    if option["end_required"] or (option["ends"] and pick(2)):
        body["end"] = option["ends"][pick(len(option["ends"]))]
    if pick(2):
        body["tile"] = {"a": option["tile"]["b"], "b": option["tile"]["a"]}
    return {"play": body}


def play_match(seed: int) -> Referee:
    """A whole match of random legal moves under the referee's eye."""
    table, happened, rng = new_table(seed)
    moves = random.Random(seed)
    referee = Referee(happened)
    while not referee.over:
        [seat] = GAME.to_act(table.state)
        assert seat == referee.turn
        view = GAME.view(table.state, seat)
        legal = referee.legal(seat)
        assert {norm(p["tile"]): set(p["ends"]) for p in view["playable"]} == {
            tile: set(ends) for tile, ends in legal.items()
        }, "the view offers exactly the legal plays, never a voluntary pass"
        for p in view["playable"]:
            required = len({tuple(sorted(e)) for e in legal[norm(p["tile"])].values()}) > 1
            assert p["end_required"] == required
        assert GAME.legal is not None
        assert {(norm(a["play"]["tile"]), a["play"].get("end")) for a in GAME.legal(table.state, seat)} == {
            (tile, end) for tile, ends in legal.items() for end in (ends or [None])
        }, "legal lists each playable tile on each end it fits"
        action = choose(view, moves.randrange)
        happened = play.act(GAME, table, seat, action, ctx(rng))
        assert conserved(table.state), "the 28 tiles are in the hands and on the line"
        referee.follow(seat, happened, legal)
        if not referee.over:
            assert GAME.scores is not None and GAME.scores(table.state) == [
                referee.scores[s % 2] for s in range(4)
            ]
    assert GAME.to_act(table.state) == []
    result = GAME.outcome(table.state)
    assert result is not None
    assert result.reason == EndReason.COMPLETED and result.forfeited == []
    winner = 0 if referee.scores[0] >= TARGET else 1
    assert winner == referee.winner
    assert referee.scores[1 - winner] < TARGET
    assert result.ranks == [1 if s % 2 == winner else 2 for s in range(4)]
    assert result.scores == [referee.scores[s % 2] for s in range(4)]
    return referee


def test_thousands_of_random_matches_follow_the_rules() -> None:
    kinds: dict[str, int] = {"BATIDA": 0, "TRANCA": 0}
    for seed in range(2000):
        referee = play_match(seed)
        assert referee.rounds_ended and set(referee.rounds_ended) <= set(kinds)
        for kind in referee.rounds_ended:
            kinds[kind] += 1
    assert kinds["BATIDA"] > 0 and kinds["TRANCA"] > 0, kinds


# --- hypothesis: moves it chooses, and anything thrown at a reachable state --------------

tiles_st = st.fixed_dictionaries({"a": st.integers(-1, 7), "b": st.integers(-1, 7)})
junk_st = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 9) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
actions_st = st.one_of(
    st.builds(
        lambda tile, end: {"play": {"tile": tile} if end is None else {"tile": tile, "end": end}},
        tiles_st,
        st.sampled_from([None, "END_UNSPECIFIED", "LEFT", "RIGHT", "UP", 2]),
    ),
    st.just({"claim_inactivity": {}}),
    st.dictionaries(st.sampled_from(["play", "claim_inactivity", "pass", "tile"]), junk_st, max_size=2),
)


def reachable(seed: int, steps: int) -> Table:
    table, _, rng = new_table(seed)
    moves = random.Random(seed)
    for _ in range(steps):
        if GAME.outcome(table.state) is not None:
            break
        [seat] = GAME.to_act(table.state)
        play.act(GAME, table, seat, choose(GAME.view(table.state, seat), moves.randrange), ctx(rng))
    return table


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    steps=st.integers(0, 80),
    seat=st.integers(0, 3),
    action=actions_st,
    idle=st.sampled_from([0.0, 119.0, 120.0, 500.0]),
)
def test_any_action_is_applied_whole_or_refused(
    seed: int, steps: int, seat: int, action: JSON, idle: float
) -> None:
    table = reachable(seed, steps)
    trial = copy.deepcopy(table)
    try:
        happened = play.act(GAME, trial, seat, action, ctx(MatchRng(bytes(32)), now=table.idle_since + idle))
    except RulesError as error:
        assert error.code and error.code == error.code.lower() and " " not in error.code
    else:
        assert happened and conserved(trial.state)
        assert GAME.outcome(trial.state) is not None or GAME.to_act(trial.state) != []


@settings(max_examples=40, deadline=None, database=None)
@given(seed=st.integers(0, 2**32), data=st.data())
def test_moves_chosen_by_hypothesis_keep_every_invariant(seed: int, data: st.DataObject) -> None:
    def pick(n: int) -> int:
        return data.draw(st.integers(0, n - 1))

    table, happened, rng = new_table(seed)
    referee = Referee(happened)
    for _ in range(data.draw(st.integers(1, 120))):
        if referee.over:
            break
        [seat] = GAME.to_act(table.state)
        view = GAME.view(table.state, None)
        assert sum(view["hand_counts"]) + len(view["line"]) == 28
        assert view["hand_counts"] == [len(hand) for hand in referee.hands]
        assert GAME.scores is not None and GAME.scores(table.state) == [
            referee.scores[s % 2] for s in range(4)
        ]
        happened = play.act(GAME, table, seat, choose(GAME.view(table.state, seat), pick), ctx(rng))
        assert conserved(table.state)
        referee.follow(seat, happened)
