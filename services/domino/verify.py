"""Dominó (docs/fairness.md "Dominó"): every round shuffles the 28 tiles in
their set order and cuts four hands of seven in seat order. The seed gives
every hand, so each play is checked against the player's hand, every pass is
checked to be forced, and a round's end is scored from the hands left."""

from __future__ import annotations

from tools.verify.record import JSON, Event, Mismatch
from tools.verify.replay import Expected, Shadow, end_reason

Tile = tuple[int, int]
SEATS = 4
HAND = 7
TARGET = 50
DOUBLE_SIX: Tile = (6, 6)


def full_set() -> list[Tile]:
    """0-0, 0-1, …, 0-6, 1-1, …, 6-6: low half first, in that order."""
    return [(a, b) for a in range(7) for b in range(a, 7)]


def tile_json(tile: Tile) -> JSON:
    return {"a": tile[0], "b": tile[1]}


def pips(tiles: list[Tile]) -> int:
    return sum(a + b for a, b in tiles)


def fits(hand: list[Tile], ends: Tile) -> bool:
    return any(ends[0] in tile or ends[1] in tile for tile in hand)


class Domino(Shadow):
    choices = frozenset({"played"})
    # This round's: every hand, the seat to act, the line's open ends (None
    # while empty) and length, each team's last player.
    hands: list[list[Tile]]
    turn: int
    ends: Tile | None
    length: int
    last_play: list[int | None]

    def start(self) -> list[Expected]:
        self.round = 1
        self.scores = [0, 0]
        self.departed: tuple[int, str] | None = None
        self.winner: int | None = None
        return self._deal(None)

    def choose(self, event: Event) -> list[Expected]:
        self.check_turn(event, self.turn)
        seat = self.turn
        raw = event.data.get("tile", {})
        sent = (int(raw.get("a", 0)), int(raw.get("b", 0)))
        tile = (min(sent), max(sent))
        hand = self.hands[seat]
        if tile not in hand:
            raise Mismatch("tile", f"one of seat {seat}'s tiles {[tile_json(t) for t in hand]}", raw)
        end = event.data.get("end", "END_UNSPECIFIED")
        if self.ends is None:
            if self.round == 1 and tile != DOUBLE_SIX:
                raise Mismatch("tile", tile_json(DOUBLE_SIX), raw)
            laid, end, self.ends = sent, "END_UNSPECIFIED", sent
        else:
            left, right = self.ends
            a, b = tile
            if end == "LEFT" and left in tile:
                laid = (a, b) if b == left else (b, a)
                self.ends = (laid[0], right)
            elif end == "RIGHT" and right in tile:
                laid = (a, b) if a == right else (b, a)
                self.ends = (left, laid[1])
            else:
                raise Mismatch("end", f"an end the tile fits (open ends {left} and {right})", end)
        hand.remove(tile)
        played = {
            "seat": seat,
            "tile": tile_json(laid),
            "end": end,
            "order": self.length,
            "left_end": self.ends[0],
            "right_end": self.ends[1],
            "tiles_left": len(hand),
        }
        self.length += 1
        self.last_play[seat % 2] = seat
        return [Expected("played", played), *self._after_play(seat)]

    def depart(self, seat: int, why: str) -> list[Expected]:
        self.unshown.append(f"round {self.round}: the tiles still in the hands when the match ended")
        self.departed = (seat, why)
        self._end(1 - seat % 2)
        return []

    def result(self) -> JSON:
        assert self.winner is not None
        return {
            "ranks": [1 if seat % 2 == self.winner else 2 for seat in range(SEATS)],
            "scores": [self.scores[seat % 2] for seat in range(SEATS)],
            "reason": end_reason(self.departed[1] if self.departed else None),
            "forfeited": [self.departed[0]] if self.departed else [],
        }

    def _deal(self, opener: int | None) -> list[Expected]:
        tiles = full_set()
        self.rng.shuffle(tiles)
        self.hands = [sorted(tiles[seat * HAND : (seat + 1) * HAND]) for seat in range(SEATS)]
        if opener is None:
            opener = next(seat for seat, hand in enumerate(self.hands) if DOUBLE_SIX in hand)
        self.turn = opener
        self.ends = None
        self.length = 0
        self.last_play = [None, None]
        started = {
            "round": self.round,
            "opener": opener,
            "scores": list(self.scores),
            "opening_tile": tile_json(DOUBLE_SIX) if self.round == 1 else None,
        }
        dealt = [
            Expected("dealt", {"seat": s, "tiles": [tile_json(t) for t in self.hands[s]]}, audience=(s,))
            for s in range(SEATS)
        ]
        return [Expected("round_started", started), *dealt]

    def _after_play(self, seat: int) -> list[Expected]:
        assert self.ends is not None
        if not self.hands[seat]:
            return self._end_round("BATIDA", seat)
        if not any(fits(hand, self.ends) for hand in self.hands):
            return self._end_round("TRANCA", seat)
        events = []
        turn = (seat + 1) % SEATS
        while not fits(self.hands[turn], self.ends):
            passed = {"seat": turn, "left_end": self.ends[0], "right_end": self.ends[1]}
            events.append(Expected("passed", {**passed, "line_length": self.length}))
            turn = (turn + 1) % SEATS
        self.turn = turn
        return events

    def _end_round(self, kind: str, seat: int) -> list[Expected]:
        team_pips = [pips(self.hands[0] + self.hands[2]), pips(self.hands[1] + self.hands[3])]
        if kind == "BATIDA":
            winner = seat % 2
        elif team_pips[0] != team_pips[1]:
            winner = 0 if team_pips[0] < team_pips[1] else 1
        else:
            winner = 1 - seat % 2  # equal pips: the team that blocked loses
        points = team_pips[1 - winner]
        self.scores[winner] += points
        over = self.scores[winner] >= TARGET
        next_opener = seat if kind == "BATIDA" else self.last_play[winner]
        summary = {
            "round": self.round,
            "kind": kind,
            "seat": seat,
            "winning_team": winner,
            "points": points,
            "team_pips": team_pips,
            "hands": [
                {"seat": s, "tiles": [tile_json(t) for t in hand], "pips": pips(hand)}
                for s, hand in enumerate(self.hands)
            ],
            "scores": list(self.scores),
            "next_opener": None if over else next_opener,
        }
        events = [Expected("round_ended", summary)]
        if over:
            self._end(winner)
            return events
        self.round += 1
        return [*events, *self._deal(next_opener)]

    def _end(self, winner: int) -> None:
        self.winner = winner
        self.over = True


SHADOW = Domino
