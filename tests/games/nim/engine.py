"""Nim's rules: one heap, take 1 to ``max_take`` stones a turn, who takes the
last stone wins; the others share second place. A seat that leaves or is
removed is out (ranked last); the last seat in wins."""

from __future__ import annotations

from rodada.nim.v1 import nim_pb2

from services.kit.engine import (
    JSON,
    Context,
    Departure,
    EndReason,
    Event,
    InvalidAction,
    Outcome,
    State,
)


def setup(seats: int, options: nim_pb2.Options, mode: str, ctx: Context) -> tuple[State, list[Event]]:
    heap, max_take = options.heap or 15, options.max_take or 3
    if not 1 <= heap <= 100 or not 1 <= max_take <= 10:
        raise InvalidAction("invalid_options", "heap is 1-100 and max_take 1-10")
    state: State = {
        "heap": heap,
        "max_take": max_take,
        "taken": [0] * seats,
        "out": [],
        "turn": ctx.rng.randbelow(seats),
        "winner": None,
    }
    return state, []


def take(state: State, seat: int, move: nim_pb2.Take, ctx: Context) -> list[Event]:
    if not 1 <= move.stones <= min(state["max_take"], state["heap"]):
        raise InvalidAction("invalid_take", f"take 1 to {min(state['max_take'], state['heap'])} stones")
    state["heap"] -= move.stones
    state["taken"][seat] += move.stones
    if state["heap"] == 0:
        state["winner"] = seat
    else:
        state["turn"] = _next(state, seat)
    return [Event("took", {"seat": seat, "stones": move.stones, "heap": state["heap"]})]


def depart(state: State, seat: int, why: Departure, ctx: Context) -> list[Event]:
    state["out"].append({"seat": seat, "reason": why.value})
    still_in = [s for s in range(len(state["taken"])) if in_play(state, s)]
    if len(still_in) <= 1:
        state["winner"] = still_in[0] if still_in else seat
    elif state["turn"] == seat:
        state["turn"] = _next(state, seat)
    return []


def _next(state: State, seat: int) -> int:
    seats = len(state["taken"])
    return next(s for s in ((seat + step) % seats for step in range(1, seats + 1)) if in_play(state, s))


def in_play(state: State, seat: int) -> bool:
    return all(out["seat"] != seat for out in state["out"])


def to_act(state: State) -> list[int]:
    return [] if state["winner"] is not None else [state["turn"]]


def outcome(state: State) -> Outcome | None:
    if state["winner"] is None:
        return None
    seats = len(state["taken"])
    outs = [out["seat"] for out in state["out"]]
    ranks = [1 if s == state["winner"] else 2 for s in range(seats)]
    for place, seat in enumerate(reversed(outs), start=seats - len(outs) + 1):
        ranks[seat] = place
    reasons = {out["reason"] for out in state["out"]}
    reason = (
        EndReason.FORFEIT
        if Departure.LEFT in reasons
        else EndReason.INACTIVITY
        if reasons
        else EndReason.COMPLETED
    )
    return Outcome(ranks=ranks, reason=reason, forfeited=outs)


def view(state: State, seat: int | None) -> JSON:
    return {"heap": state["heap"], "max_take": state["max_take"], "taken": list(state["taken"])}


def legal(state: State, seat: int) -> list[JSON]:
    if seat not in to_act(state):
        return []
    return [{"take": {"stones": n}} for n in range(1, min(state["max_take"], state["heap"]) + 1)]


def last_stone(outcome: Outcome, events: list[JSON]) -> list[int]:
    """The trophy "Last stone": the seat that took it (none if the match
    ended otherwise)."""
    return [e["took"]["seat"] for e in events if "took" in e and not e["took"].get("heap")]
