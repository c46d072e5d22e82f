"""Dominó: Brazilian partnership dominoes (RULES.md "Dominó", seed 003).

Four seats, partners opposite (team 0, TEAM_0: seats 0 & 2; team 1, TEAM_1:
seats 1 & 3), play clockwise (the next seat index). Every round deals the 28
tiles of a double-six set, 7 to each seat, no boneyard. The first round is
opened by the holder of 6-6, who must lay it; later rounds by the seat that
went out, or after a tranca by the winning team's seat that made its last
play, with any tile. A seat that cannot play passes automatically (the
engine applies the pass; everyone sees a ``passed`` event). A round ends in
a batida (a seat empties its hand: its team scores the two opponents' pips)
or a tranca (nobody can play: the team with fewer pips scores the other's;
on equal sums the team that made the blocking play loses). The first team
to reach 50 wins.

Leaving (platform decision): the leaver's team concedes the match. An
inactivity claim (the kit's, by an opponent of the seat to act after 120 s)
concedes the idle seat's team's match the same way.

Hidden: the other three hands, until the round's end reveals all four.

The state is a plain dict:

- ``round``: the round being played, from 1;
- ``hands``: per seat, its tiles, normalised (low half first) and sorted;
- ``line``: the line of play left to right, each ``{"tile": [left, right],
  "seat", "order"}``, the tile oriented as it lies;
- ``passes``: this round's passes, each ``{"seat", "left_end", "right_end",
  "line_length"}``;
- ``turn``: the seat to act, None once the match is over;
- ``last_play``: per team, the seat that made that team's last play this
  round (who opens after a tranca);
- ``scores``: per team; ``last_round``: the previous round's summary;
- ``result``: None while playing, else ``{"winning_team", "reason"`` (an
  EndReason value) ``, "forfeited"`` (the seats that left or were claimed
  against) ``}``.
"""

from __future__ import annotations

from collections.abc import Sequence

from rodada.domino.v1 import domino_pb2

from services.domino import scoring
from services.domino.scoring import RoundOutcome, team_of
from services.domino.tiles import (
    DOUBLE_SIX,
    HIGHEST_PIP,
    LEFT,
    RIGHT,
    Ends,
    Tile,
    can_play,
    full_set,
    normalised,
    oriented,
    pips,
    placements,
)
from services.kit.engine import (
    JSON,
    Context,
    Departure,
    EndReason,
    Event,
    InvalidAction,
    Outcome,
    RulesError,
    State,
)

SEATS = 4
HAND_SIZE = 7
TARGET = 50


def setup(seats: int, options: domino_pb2.Options, mode: str, ctx: Context) -> tuple[State, list[Event]]:
    """Four seats (the mode's only size), no options: deal the first round."""
    state: State = {"round": 1, "scores": [0, 0], "last_round": None, "result": None}
    return state, _deal(state, ctx, opener=None)


# --- dealing ---------------------------------------------------------------------


def _deal(state: State, ctx: Context, opener: int | None) -> list[Event]:
    """Shuffle and deal a new round; ``opener`` None means the holder of 6-6.

    The first round is opened by whoever holds 6-6, who must lay it; later
    rounds by the seat the previous round designated, with any tile. One
    shuffle of the sorted set per round, dealt 7 by 7 in seat order: a seed
    replays the same hands.
    """
    tiles = full_set()
    ctx.rng.shuffle(tiles)
    hands = [sorted(tiles[seat * HAND_SIZE : (seat + 1) * HAND_SIZE]) for seat in range(SEATS)]
    if opener is None:
        opener = next(seat for seat, hand in enumerate(hands) if DOUBLE_SIX in hand)
    state["hands"] = [[list(tile) for tile in hand] for hand in hands]
    state["line"] = []
    state["passes"] = []
    state["turn"] = opener
    state["last_play"] = [None, None]

    started: JSON = {"round": state["round"], "opener": opener, "scores": list(state["scores"])}
    forced = _opening_tile(state)
    if forced is not None:
        started["opening_tile"] = _tile_json(forced)
    events = [Event("round_started", started)]
    events += [
        Event("dealt", {"seat": seat, "tiles": [_tile_json(t) for t in hands[seat]]}, audience=(seat,))
        for seat in range(SEATS)
    ]
    return events


# --- the move: laying a tile -----------------------------------------------------------


def play(state: State, seat: int, move: domino_pb2.Play, ctx: Context) -> list[Event]:
    """Lay a tile on an open end (the kit has checked the turn)."""
    sent, end = _tile_and_end(move)
    tile = normalised(sent)
    if list(tile) not in state["hands"][seat]:
        raise RulesError("tile_not_in_hand", "you do not hold that tile")

    ends = _ends(state)
    if ends is None:
        forced = _opening_tile(state)
        if forced is not None and tile != forced:
            raise RulesError("must_open_with_double_six", "the first round opens with the double six")
        # The opening tile lies as sent (a on the left); an end, if given, means nothing yet.
        laid, end, new_ends = sent, None, sent
    else:
        options = placements(tile, ends)
        if not options:
            raise RulesError("tile_does_not_match", "that tile fits neither open end")
        if end is None:
            if _end_required(options):
                raise RulesError("end_required", "that tile fits both ends: choose LEFT or RIGHT")
            # Both ends alike (ends 3 and 3, tile 3-5) leave the same numbers
            # open either way; the tile then goes to the right.
            end = RIGHT if RIGHT in options else LEFT
        elif end not in options:
            raise RulesError("end_does_not_match", "that tile does not fit the chosen end")
        laid, new_ends = oriented(tile, end, ends), options[end]

    state["hands"][seat].remove(list(tile))
    placed = {"tile": list(laid), "seat": seat, "order": len(state["line"])}
    if end == LEFT:
        state["line"].insert(0, placed)
    else:
        state["line"].append(placed)
    state["last_play"][team_of(seat)] = seat

    played: JSON = {
        "seat": seat,
        "tile": _tile_json(laid),
        "order": placed["order"],
        "left_end": new_ends[0],
        "right_end": new_ends[1],
        "tiles_left": len(state["hands"][seat]),
    }
    if end is not None:
        played["end"] = end
    return [Event("played", played), *_after_play(state, seat, new_ends, ctx)]


def _tile_and_end(move: domino_pb2.Play) -> tuple[Tile, str | None]:
    """The tile (halves as sent) and the end, None when not given.

    Absent halves are 0: the proto omits zero values, so the 0-0 tile
    (branca dupla) arrives as ``{"tile": {}}``; an absent tile is refused.
    """
    if not move.HasField("tile"):
        raise InvalidAction("missing_tile", "a play names the tile to lay")
    halves = (move.tile.a, move.tile.b)
    if any(not 0 <= half <= HIGHEST_PIP for half in halves):
        raise InvalidAction("invalid_tile", "each half of a tile has 0 to 6 pips")
    # The JSON path refuses unknown enum numbers; a binary Action may still carry one.
    if move.end not in domino_pb2.End.values():
        raise InvalidAction("invalid_end", "end is LEFT, RIGHT or END_UNSPECIFIED")
    end = domino_pb2.End.Name(move.end)
    return halves, (None if end == "END_UNSPECIFIED" else end)


def _after_play(state: State, seat: int, ends: Ends, ctx: Context) -> list[Event]:
    """End the round, or hand the turn on, passing for those who cannot play.

    Going out wins even when the last tile also closes the table: the seat
    emptied its hand first.
    """
    if not state["hands"][seat]:
        return _end_round(state, scoring.batida(state["hands"], seat), ctx)
    if not any(can_play(hand, ends) for hand in state["hands"]):
        return _end_round(state, scoring.tranca(state["hands"], seat), ctx)
    events = []
    turn = (seat + 1) % SEATS
    while not can_play(state["hands"][turn], ends):
        passed = {"seat": turn, "left_end": ends[0], "right_end": ends[1], "line_length": len(state["line"])}
        state["passes"].append(passed)
        events.append(Event("passed", dict(passed)))
        turn = (turn + 1) % SEATS
    state["turn"] = turn
    return events


# --- ending a round and the match --------------------------------------------------------


def _end_round(state: State, outcome: RoundOutcome, ctx: Context) -> list[Event]:
    state["scores"][outcome.winning_team] += outcome.points
    summary: JSON = {
        "round": state["round"],
        "kind": outcome.kind,
        "seat": outcome.seat,
        "winning_team": outcome.winning_team,
        "points": outcome.points,
        "team_pips": list(outcome.team_pips),
        "hands": [
            {"seat": seat, "tiles": [_tile_json(t) for t in hand], "pips": pips(hand)}
            for seat, hand in enumerate(state["hands"])
        ],
        "scores": list(state["scores"]),
    }
    over = state["scores"][outcome.winning_team] >= TARGET
    if not over:
        summary["next_opener"] = _next_opener(state, outcome)
    state["last_round"] = summary
    # The event gets its own copy: the summary stays in the state.
    events = [Event("round_ended", _summary_copy(summary))]
    if over:
        _end_match(state, outcome.winning_team, EndReason.COMPLETED, [])
        return events
    state["round"] += 1
    return events + _deal(state, ctx, summary["next_opener"])


def _next_opener(state: State, outcome: RoundOutcome) -> int:
    """The seat that went out; after a tranca, the winners' last player.

    The winning team of a tranca always played in the round: a team that
    never plays keeps its 14 tiles, none of the blocked number (all seven of
    its tiles are on the line), and between its two seats passes on each of
    the other six numbers as it comes open; so one of them lacks at least
    four numbers and has at most six tiles, not seven.
    """
    if outcome.kind == scoring.BATIDA:
        return outcome.seat
    last: int | None = state["last_play"][outcome.winning_team]
    assert last is not None, "a tranca's winning team always made a play"
    return last


def _end_match(state: State, winning_team: int, reason: EndReason, forfeited: list[int]) -> None:
    state["result"] = {"winning_team": winning_team, "reason": reason.value, "forfeited": forfeited}
    state["turn"] = None


def depart(state: State, seat: int, why: Departure, ctx: Context) -> list[Event]:
    """The seat left or was claimed against: its team concedes the match.

    The kit tells the table (LEFT, CLAIMED notices; the final Result)."""
    _end_match(state, 1 - team_of(seat), why.end_reason, [seat])
    return []


# --- reading the state -------------------------------------------------------------------


def to_act(state: State) -> list[int]:
    return [] if state["turn"] is None else [state["turn"]]


def scores(state: State) -> list[int]:
    """Each seat's team score so far (partners repeat it)."""
    return [state["scores"][team_of(seat)] for seat in range(SEATS)]


def outcome(state: State) -> Outcome | None:
    """The winning team ranks 1, the other 2."""
    result = state["result"]
    if result is None:
        return None
    return Outcome(
        ranks=[1 if team_of(seat) == result["winning_team"] else 2 for seat in range(SEATS)],
        scores=scores(state),
        reason=EndReason(result["reason"]),
        forfeited=list(result["forfeited"]),
    )


def view(state: State, seat: int | None) -> JSON:
    """The viewer's own hand, everything public, and the viewer's playable
    tiles on its turn; a spectator (None) sees no hand."""
    view: JSON = {
        "hand": [] if seat is None else [_tile_json(t) for t in state["hands"][seat]],
        "hand_counts": [len(hand) for hand in state["hands"]],
        "line": [
            {"tile": _tile_json(p["tile"]), "seat": p["seat"], "order": p["order"]} for p in state["line"]
        ],
        "passes": [dict(p) for p in state["passes"]],
        "target": TARGET,
        "round": state["round"],
        "playable": [],
    }
    ends = _ends(state)
    if ends is not None:
        view["left_end"], view["right_end"] = ends
    if state["result"] is None:
        forced = _opening_tile(state)
        if forced is not None:
            view["opening_tile"] = _tile_json(forced)
        if seat is not None and seat == state["turn"]:
            view["playable"] = [
                {
                    "tile": _tile_json(tile),
                    "ends": [end for end in (LEFT, RIGHT) if end in options],
                    "end_required": _end_required(options),
                }
                for tile, options in _playable(state, seat)
            ]
    if state["last_round"] is not None:
        view["last_round"] = _summary_copy(state["last_round"])
    return view


def legal(state: State, seat: int) -> list[JSON]:
    """Every play the seat may make now: each playable tile, on each end it
    fits; on the opening, without an end, each way round (it lies as sent)."""
    if state["result"] is not None or seat != state["turn"]:
        return []
    actions: list[JSON] = []
    for tile, options in _playable(state, seat):
        if not options:
            turned = [] if tile[0] == tile[1] else [{"play": {"tile": _tile_json(tile[::-1])}}]
            actions += [{"play": {"tile": _tile_json(tile)}}, *turned]
        actions += [
            {"play": {"tile": _tile_json(tile), "end": end}} for end in (LEFT, RIGHT) if end in options
        ]
    return actions


# --- helpers -----------------------------------------------------------------------------


def _tile_json(tile: Sequence[int]) -> JSON:
    return {"a": tile[0], "b": tile[1]}


def _summary_copy(summary: JSON) -> JSON:
    """A round summary's copy: its lists are its own."""
    return {
        **summary,
        "team_pips": list(summary["team_pips"]),
        "scores": list(summary["scores"]),
        "hands": [{**hand, "tiles": [dict(t) for t in hand["tiles"]]} for hand in summary["hands"]],
    }


def _ends(state: State) -> Ends | None:
    line = state["line"]
    if not line:
        return None
    return (line[0]["tile"][0], line[-1]["tile"][1])


def _opening_tile(state: State) -> Tile | None:
    """The tile the opening play must be: 6-6 in the first round only."""
    if state["round"] == 1 and not state["line"]:
        return DOUBLE_SIX
    return None


def _playable(state: State, seat: int) -> list[tuple[Tile, dict[str, Ends]]]:
    """The seat's tiles that may be laid now, with the ends each fits.

    On the empty line the map of ends is empty: the tile opens the line.
    """
    hand: list[Tile] = [(a, b) for a, b in state["hands"][seat]]
    ends = _ends(state)
    if ends is None:
        forced = _opening_tile(state)
        return [(tile, {}) for tile in hand if forced is None or tile == forced]
    playable = []
    for tile in hand:
        options = placements(tile, ends)
        if options:
            playable.append((tile, options))
    return playable


def _end_required(options: dict[str, Ends]) -> bool:
    """Both ends fit and leave different open numbers: the player chooses."""
    return len({tuple(sorted(result)) for result in options.values()}) > 1
