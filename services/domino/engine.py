"""Dominó: Brazilian partnership dominoes (RULES.md "Dominó", seed 003).

Four seats, partners opposite (team 0: seats 0 & 2, team 1: seats 1 & 3),
play clockwise (the next seat index). Every round deals the 28 tiles of a
double-six set, 7 to each seat, no boneyard. The first team to reach 50 wins.

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
- ``result``: None while playing, else how the match ended.
"""

from __future__ import annotations

import marshal
from collections.abc import Sequence

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
from services.kit.engine import JSON, Context, Event, InvalidAction, Result, RulesError

SEATS = 4
HAND_SIZE = 7
TARGET = 50
INACTIVITY_SECONDS = 120

COMPLETED = "COMPLETED"
FORFEIT = "FORFEIT"
INACTIVITY = "INACTIVITY"
_RESULT_REASONS = {COMPLETED: "completed", FORFEIT: "forfeit", INACTIVITY: "inactivity"}
_END_NAMES = ("END_UNSPECIFIED", LEFT, RIGHT)


# --- the JSON forms of the proto messages ------------------------------------


def _tile_json(tile: Sequence[int]) -> JSON:
    return {"a": tile[0], "b": tile[1]}


def _clone(value: JSON) -> JSON:
    """A deep copy of a JSON value, a few times cheaper than copy.deepcopy."""
    copied: JSON = marshal.loads(marshal.dumps(value))
    return copied


def _writable(state: JSON) -> JSON:
    """A copy of the state that an action may change, leaving ``state`` as it was.

    Only the containers an action changes in place are copied (the hot path
    runs on every move): a tile, a line entry, a pass, a round summary or a
    result is never changed once stored, only replaced.
    """
    new = dict(state)
    new["hands"] = [list(hand) for hand in state["hands"]]
    new["line"] = list(state["line"])
    new["passes"] = list(state["passes"])
    new["scores"] = list(state["scores"])
    new["last_play"] = list(state["last_play"])
    return new


# --- reading the state ---------------------------------------------------------


def _ends(state: JSON) -> Ends | None:
    line = state["line"]
    if not line:
        return None
    return (line[0]["tile"][0], line[-1]["tile"][1])


def _opening_tile(state: JSON) -> Tile | None:
    """The tile the opening play must be: 6-6 in the first round only."""
    if state["round"] == 1 and not state["line"]:
        return DOUBLE_SIX
    return None


def _playable(state: JSON, seat: int) -> list[tuple[Tile, dict[str, Ends]]]:
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


def _nobody_can_play(state: JSON, ends: Ends) -> bool:
    return not any(can_play(hand, ends) for hand in state["hands"])


# --- validating the action -------------------------------------------------------


def _check_seat(seat: int) -> None:
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < SEATS:
        raise InvalidAction("invalid_seat", "there is no such seat at this table")


def _parse_action(action: JSON) -> tuple[str, JSON]:
    if not isinstance(action, dict) or len(action) != 1:
        raise InvalidAction("malformed_action", "an action has exactly one kind: play or claim_inactivity")
    ((kind, body),) = action.items()
    if kind not in ("play", "claim_inactivity"):
        raise InvalidAction("unknown_action", "an action is play or claim_inactivity")
    allowed = {"tile", "end"} if kind == "play" else set()
    if not isinstance(body, dict) or not set(body) <= allowed:
        raise InvalidAction("malformed_action", f"{kind} has unknown fields or is not an object")
    return kind, body


def _parse_play(body: JSON) -> tuple[Tile, str | None]:
    """The tile (halves as sent) and the end, None when not given.

    Absent halves are 0: the proto's JSON form omits zero values, so the
    0-0 tile (branca dupla) arrives as ``{"tile": {}}``.
    """
    raw = body.get("tile")
    if raw is None:
        raise InvalidAction("missing_tile", "a play names the tile to lay")
    if not isinstance(raw, dict) or not set(raw) <= {"a", "b"}:
        raise InvalidAction("invalid_tile", "a tile is {a, b}")
    halves = (raw.get("a", 0), raw.get("b", 0))
    for half in halves:
        if isinstance(half, bool) or not isinstance(half, int) or not 0 <= half <= HIGHEST_PIP:
            raise InvalidAction("invalid_tile", "each half of a tile has 0 to 6 pips")
    end = body.get("end", "END_UNSPECIFIED")
    if end not in _END_NAMES:
        raise InvalidAction("invalid_end", "end is LEFT, RIGHT or END_UNSPECIFIED")
    return halves, (None if end == "END_UNSPECIFIED" else end)


def _check_playing(state: JSON) -> None:
    if state["result"] is not None:
        raise RulesError("game_over", "the match is over")


# --- dealing ---------------------------------------------------------------------


def _deal(state: JSON, ctx: Context, opener: int | None) -> list[Event]:
    """Shuffle and deal a new round; ``opener`` None means the holder of 6-6.

    The first round is opened by whoever holds 6-6, who must lay it; later
    rounds by the seat the previous round designated, with any tile.
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


# --- playing a tile ----------------------------------------------------------------


def _play(state: JSON, seat: int, body: JSON, ctx: Context) -> tuple[JSON, list[Event]]:
    sent, end = _parse_play(body)
    _check_playing(state)
    if seat != state["turn"]:
        raise RulesError("not_your_turn", "it is not your turn")
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

    new = _writable(state)
    new["hands"][seat].remove(list(tile))
    placed = {"tile": list(laid), "seat": seat, "order": len(new["line"])}
    if end == LEFT:
        new["line"].insert(0, placed)
    else:
        new["line"].append(placed)
    new["last_play"][team_of(seat)] = seat

    played: JSON = {
        "seat": seat,
        "tile": _tile_json(laid),
        "order": placed["order"],
        "left_end": new_ends[0],
        "right_end": new_ends[1],
        "tiles_left": len(new["hands"][seat]),
    }
    if end is not None:
        played["end"] = end
    events = [Event("played", played)]
    events += _after_play(new, seat, new_ends, ctx)
    return new, events


def _after_play(state: JSON, seat: int, ends: Ends, ctx: Context) -> list[Event]:
    """End the round, or hand the turn on, passing for those who cannot play.

    Going out wins even when the last tile also closes the table: the seat
    emptied its hand first.
    """
    if not state["hands"][seat]:
        return _end_round(state, scoring.batida(state["hands"], seat), ctx)
    if _nobody_can_play(state, ends):
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


# --- ending a round -------------------------------------------------------------------


def _next_opener(state: JSON, outcome: RoundOutcome) -> int:
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


def _end_round(state: JSON, outcome: RoundOutcome, ctx: Context) -> list[Event]:
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
    events = [Event("round_ended", _clone(summary))]
    if over:
        return events + _end_match(state, outcome.winning_team, COMPLETED)
    state["round"] += 1
    return events + _deal(state, ctx, summary["next_opener"])


def _end_match(
    state: JSON, winning_team: int, reason: str, forfeited: int | None = None, claimed_by: int | None = None
) -> list[Event]:
    result: JSON = {"winning_team": winning_team, "reason": reason, "scores": list(state["scores"])}
    if forfeited is not None:
        result["forfeited_seat"] = forfeited
    if claimed_by is not None:
        result["claimed_by"] = claimed_by
    state["result"] = result
    state["turn"] = None
    return [Event("match_ended", dict(result, scores=list(result["scores"])))]


# --- claiming inactivity ------------------------------------------------------------------


def _claim(state: JSON, seat: int, ctx: Context) -> tuple[JSON, list[Event]]:
    """An opponent of the idle seat to act takes the match (as in Bozó)."""
    _check_playing(state)
    idle: int = state["turn"]
    if seat == idle:
        raise RulesError("cannot_claim_yourself", "it is your own turn")
    if team_of(seat) == team_of(idle):
        raise RulesError("partner_cannot_claim", "only an opponent may claim against your partner")
    if ctx.now - ctx.last_action_at < INACTIVITY_SECONDS:
        raise RulesError("too_early", f"a claim needs {INACTIVITY_SECONDS} seconds without an action")
    new = _writable(state)
    return new, _end_match(new, team_of(seat), INACTIVITY, forfeited=idle, claimed_by=seat)


# --- the engine ----------------------------------------------------------------------------


class DominoEngine:
    name = "domino"
    min_seats = SEATS
    max_seats = SEATS

    def new_match(
        self, seats: int, options: JSON, ctx: Context, cpu_seats: Sequence[int] = ()
    ) -> tuple[JSON, list[Event]]:
        if seats != SEATS:
            raise InvalidAction("invalid_seat_count", "Dominó is played by four, in two teams")
        if options:
            raise InvalidAction("invalid_options", "Dominó has no options")
        if cpu_seats:
            raise InvalidAction("cpu_seats_unsupported", "Dominó has no CPU seats")
        state: JSON = {"round": 1, "scores": [0, 0], "last_round": None, "result": None}
        return state, _deal(state, ctx, opener=None)

    def apply(self, state: JSON, seat: int, action: JSON, ctx: Context) -> tuple[JSON, list[Event]]:
        _check_seat(seat)
        kind, body = _parse_action(action)
        if kind == "claim_inactivity":
            return _claim(state, seat, ctx)
        return _play(state, seat, body, ctx)

    def leave(self, state: JSON, seat: int, ctx: Context) -> tuple[JSON, list[Event]]:
        """Leaving concedes the match to the opposing team (RULES.md, Decision)."""
        _check_seat(seat)
        _check_playing(state)
        new = _writable(state)
        return new, _end_match(new, 1 - team_of(seat), FORFEIT, forfeited=seat)

    def view(self, state: JSON, seat: int | None) -> JSON:
        if seat is not None:
            _check_seat(seat)
        view: JSON = {
            "hand": [] if seat is None else [_tile_json(t) for t in state["hands"][seat]],
            "hand_counts": [len(hand) for hand in state["hands"]],
            "line": [
                {"tile": _tile_json(p["tile"]), "seat": p["seat"], "order": p["order"]} for p in state["line"]
            ],
            "passes": [dict(p) for p in state["passes"]],
            "scores": list(state["scores"]),
            "target": TARGET,
            "round": state["round"],
            "playable": [],
        }
        if seat is not None:
            view["seat"] = seat
        ends = _ends(state)
        if ends is not None:
            view["left_end"], view["right_end"] = ends
        if state["result"] is None:
            view["to_act"] = state["turn"]
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
        else:
            view["result"] = _clone(state["result"])
        if state["last_round"] is not None:
            view["last_round"] = _clone(state["last_round"])
        return view

    def to_act(self, state: JSON) -> list[int]:
        return [state["turn"]] if state["result"] is None else []

    def result(self, state: JSON) -> Result | None:
        outcome = state["result"]
        if outcome is None:
            return None
        winners = outcome["winning_team"]
        return Result(
            ranks=[1 if team_of(seat) == winners else 2 for seat in range(SEATS)],
            scores=[outcome["scores"][team_of(seat)] for seat in range(SEATS)],
            reason=_RESULT_REASONS[outcome["reason"]],
            forfeited=[outcome["forfeited_seat"]] if "forfeited_seat" in outcome else [],
        )


ENGINE = DominoEngine()
