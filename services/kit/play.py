"""The kit's play of a game's rules: what every game does the same way, once.

Dispatching an action to its move, the turn check, the turn clock, leaving,
inactivity claims, deadlines and CPU-played seats. Pure like the rules
themselves: the service (``matches.py``) loads a match, calls one of
:func:`start`, :func:`act`, :func:`leave` or :func:`fire_deadline` on a
freshly decoded :class:`Table`, and commits what happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from services.kit.engine import Context, Departure, Event, InvalidAction, Outcome, Rng, RulesError, State
from services.kit.game import (
    CLAIMABLE,
    CPU_PLAYS,
    EXPIRE,
    INACTIVITY_SECONDS,
    NOBODY,
    OPPONENTS,
    Game,
    to_json,
)

# A CPU seat plays until a person must act; this bounds a broken policy.
MAX_CPU_MOVES = 10_000
# The actions the kit answers itself when a game's Action has them.
CLAIM, TAKE_OVER = "claim_inactivity", "take_over"


@dataclass(frozen=True)
class Notice:
    """Something the kit tells the table (the common proto's ``Notice``);
    it travels in a match's history beside the game's events."""

    kind: str  # NoticeKind value name without its prefix, e.g. "LEFT"
    seat: int
    since: float | None = None
    by: int | None = None
    audience: tuple[int, ...] | None = None


Happening = Event | Notice


@dataclass
class Table:
    """The rules' part of a match record: the game's state and what the kit
    keeps beside it. Mutable, owned by the caller (see engine.py)."""

    state: State
    seats: int
    mode: str
    cpu_seats: list[int]  # seats the computer plays from the start
    left: list[int]  # seats whose player left and a CPU plays (CPU_PLAYS), in leaving order
    idle_since: float  # when the seat to act got the turn or last acted

    @property
    def cpu(self) -> list[int]:
        """Every seat the computer plays now."""
        return [*self.cpu_seats, *self.left]

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Table:
        """From a match record (the service's ``doc``)."""
        cpu_seats = [i for i, player in enumerate(doc["players"]) if player["cpu"]]
        return cls(
            doc["state"], len(doc["players"]), doc["mode"], cpu_seats, list(doc["left"]), doc["idle_since"]
        )

    def doc_fields(self) -> dict[str, Any]:
        """What a match record keeps of the table (CPU seats are in its players)."""
        return {"state": self.state, "mode": self.mode, "left": self.left, "idle_since": self.idle_since}


# -- play ---------------------------------------------------------------------


def start(
    game: Game,
    seats: int,
    options: Any,
    ctx: Context,
    cpu_seats: Sequence[int] = (),
    cpu_rng: Rng | None = None,
) -> tuple[Table, list[Happening]]:
    """A new match: the mode that fits, the game's setup, then any CPU turns."""
    message = game.options(options)
    mode = game.mode_for(seats, to_json(message))
    cpus = sorted(cpu_seats)
    if cpus and not game.cpu_seats:
        raise InvalidAction("cpu_seats_unsupported", f"{game.title} has no CPU seats")
    if len(set(cpus)) != len(cpus) or any(not 0 <= s < seats for s in cpus):
        raise InvalidAction("invalid_cpu_seats", "CPU seats must be distinct seats of the table")
    state, events = game.setup(seats, message, mode.name, ctx)
    table = Table(state, seats, mode.name, cpus, [], ctx.now)
    happened: list[Happening] = list(events)
    happened += _cpu_turns(game, table, ctx, cpu_rng)
    return table, happened


def act(
    game: Game, table: Table, seat: int, action: Any, ctx: Context, cpu_rng: Rng | None = None
) -> list[Happening]:
    """``seat`` plays ``action`` (the Action message or its JSON): the move,
    then any CPU turns that follow. Changes ``table``; on RulesError the
    caller throws the table away."""
    message = game.action(action)
    kind = message.WhichOneof("action")
    if kind is None:
        raise InvalidAction("malformed_action", "set exactly one kind of action")
    _check_running(game, table)
    before = game.to_act(table.state)
    body = getattr(message, kind)
    happened: list[Happening]
    if kind == TAKE_OVER:
        happened = _take_over(table, seat)
    elif seat in table.cpu:
        raise RulesError("cpu_seat", "the computer plays this seat")
    elif kind == CLAIM:
        happened = _claim(game, table, seat, ctx)
    else:
        move = game.moves.get(kind)
        if move is None:
            raise InvalidAction("unknown_action", f"{game.title} has no {kind} action")
        if not game.in_play(table.state, seat):
            raise RulesError("not_in_game", "this seat is no longer in the match")
        if kind not in game.anytime and seat not in before:
            raise RulesError("not_your_turn", "it is another seat's turn")
        happened = list(move(table.state, seat, body, ctx))
    _clock(game, table, before, None if kind in game.quiet else seat, ctx.now)
    happened += _cpu_turns(game, table, ctx, cpu_rng)
    return happened


def leave(game: Game, table: Table, seat: int, ctx: Context, cpu_rng: Rng | None = None) -> list[Happening]:
    """``seat`` leaves, by the game's leaving policy."""
    _check_running(game, table)
    if seat in table.cpu:
        raise RulesError("cpu_seat", "the computer plays this seat already")
    if not game.in_play(table.state, seat):
        raise RulesError("not_in_game", "this seat is no longer in the match")
    before = game.to_act(table.state)
    happened: list[Happening] = [Notice("LEFT", seat)]
    if game.leaving == CPU_PLAYS:
        table.left.append(seat)
        happened.append(Notice("CPU_TOOK_OVER", seat))
    else:
        happened += _depart(game, table, seat, Departure.LEFT, ctx)
    _clock(game, table, before, None, ctx.now)
    happened += _cpu_turns(game, table, ctx, cpu_rng)
    return happened


def outcome(game: Game, table: Table) -> Outcome | None:
    """The game's outcome; where leavers are played by the CPU (the game
    cannot tell them from CPU seats), the kit names them as forfeited."""
    result = game.outcome(table.state)
    if result is None or game.leaving != CPU_PLAYS:
        return result
    return replace(result, forfeited=list(table.left))


def deadline_at(game: Game, table: Table) -> float | None:
    """When the seat to act runs out of time, or None."""
    if game.outcome(table.state) is not None or not game.to_act(table.state):
        return None
    seconds = game.deadline(table.state)
    return None if seconds is None else table.idle_since + seconds


def fire_deadline(
    game: Game, table: Table, ctx: Context, cpu_rng: Rng | None = None
) -> tuple[str, list[Happening]]:
    """The deadline has come: the mode's deadline policy, if the seat to act
    has really run out of time. Returns the DeadlineOutcome value name and
    what happened (nothing for MOVED)."""
    due = deadline_at(game, table)
    if due is None or ctx.now < due:
        return "DEADLINE_OUTCOME_MOVED", []
    idle = game.to_act(table.state)[0]
    policy = game.mode(table.mode).deadline
    if policy == CLAIMABLE:
        return "DEADLINE_OUTCOME_NOTIFIED", [Notice("INACTIVE", idle, since=table.idle_since)]
    before = game.to_act(table.state)
    if policy == EXPIRE:
        return "DEADLINE_OUTCOME_EXPIRED", [
            Notice("EXPIRED", idle, since=table.idle_since),
            *_depart(game, table, idle, Departure.INACTIVE, ctx),
        ]
    # CPU_TURN: the computer plays the idle seat's turn, then the seat is theirs again.
    happened: list[Happening] = [Notice("CPU_TOOK_OVER", idle)]
    turn = game.turn_number(table.state) if game.turn_number else None
    for _ in range(MAX_CPU_MOVES):
        if game.outcome(table.state) is not None or idle not in game.to_act(table.state):
            break
        if turn is not None and game.turn_number is not None and game.turn_number(table.state) != turn:
            break
        happened += _cpu_move(game, table, idle, ctx, cpu_rng)
    _clock(game, table, before, None, ctx.now)
    happened += _cpu_turns(game, table, ctx, cpu_rng)
    return "DEADLINE_OUTCOME_CPU_TURN", happened


# -- what the kit does for every game -------------------------------------------


def _check_running(game: Game, table: Table) -> None:
    if game.outcome(table.state) is not None:
        raise RulesError("game_over", "the match is over")


def _depart(game: Game, table: Table, seat: int, why: Departure, ctx: Context) -> list[Happening]:
    if game.depart is None:
        raise RulesError("cannot_leave", f"{game.title} has no way to leave")
    return list(game.depart(table.state, seat, why, ctx))


def _claim(game: Game, table: Table, seat: int, ctx: Context) -> list[Happening]:
    """One claim path: an inactivity claim against the seat to act."""
    if game.claims == NOBODY:
        raise RulesError("no_claims", f"{game.title} has no inactivity claims")
    if not game.in_play(table.state, seat):
        raise RulesError("not_in_game", "this seat is no longer in the match")
    idle = game.to_act(table.state)[0]
    if seat == idle:
        raise RulesError("cannot_claim_yourself", "the seat to act cannot claim against itself")
    if game.claims == OPPONENTS and game.side(table.mode, seat) == game.side(table.mode, idle):
        raise RulesError("partner_cannot_claim", "a partner cannot claim against their own side")
    if ctx.now - table.idle_since < INACTIVITY_SECONDS:
        raise RulesError("too_early", f"a claim needs {INACTIVITY_SECONDS:.0f} s without an action")
    return [Notice("CLAIMED", idle, by=seat), *_depart(game, table, idle, Departure.INACTIVE, ctx)]


def _take_over(table: Table, seat: int) -> list[Happening]:
    if seat not in table.left:
        raise RulesError("not_left", "you are playing this seat already")
    table.left.remove(seat)
    return [Notice("SEAT_TAKEN_BACK", seat)]


def _clock(game: Game, table: Table, before: list[int], actor: int | None, now: float) -> None:
    """The turn clock restarts when the seat to act changes or acts: RULES.md's
    "no action on your turn" counts from the last thing the seat did, and
    nothing another seat does (switching assist on, a spectator) restarts it."""
    if game.to_act(table.state) != before or (actor is not None and actor in before):
        table.idle_since = now


def _cpu_turns(game: Game, table: Table, ctx: Context, cpu_rng: Rng | None) -> list[Happening]:
    """Play every turn that falls to a CPU-controlled seat, until a person
    must act or the match ends."""
    happened: list[Happening] = []
    for _ in range(MAX_CPU_MOVES):
        if game.outcome(table.state) is not None:
            return happened
        due = [s for s in game.to_act(table.state) if s in table.cpu]
        if not due:
            return happened
        happened += _cpu_move(game, table, due[0], ctx, cpu_rng)
    raise RuntimeError(f"{game.name}: CPU seats made {MAX_CPU_MOVES} moves without a person's turn")


def _cpu_move(game: Game, table: Table, seat: int, ctx: Context, cpu_rng: Rng | None) -> list[Happening]:
    """One CPU move for ``seat``, chosen from that seat's view alone and
    applied through the same path as a person's."""
    if game.cpu is None:
        raise RuntimeError(f"{game.name} declares CPU play but no cpu policy")
    choice = game.cpu(game.view(table.state, seat), seat, cpu_rng or ctx.rng)
    # Built by the message's own constructor: the CPU's choice is ours, not a
    # client's, and strict JSON parsing would cost more than the move.
    message = game.messages.Action(**choice)
    kind = message.WhichOneof("action")
    assert kind is not None and kind in game.moves, f"{game.name} CPU chose {choice!r}"
    before = game.to_act(table.state)
    happened: list[Happening] = list(game.moves[kind](table.state, seat, getattr(message, kind), ctx))
    _clock(game, table, before, seat, ctx.now)
    return happened
