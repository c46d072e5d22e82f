"""What each seat may see: hidden hands never leak, and every view, event and
action is exactly the JSON form of the proto messages (played through the kit)."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf import json_format
from rodada.domino.v1 import domino_pb2

from services.domino.game import GAME
from services.kit import play
from services.kit.engine import JSON, EndReason, Event, RulesError
from services.kit.play import Happening, Table
from services.kit.rng import MatchRng
from tests.proto_shapes import assert_event_fits, assert_fits
from tests.rigged import ctx
from tests.unit.test_domino_random import choose  # the random legal play, shared

Tile = tuple[int, int]
VIEWERS: list[int | None] = [0, 1, 2, 3, None]


# Not scanned: ``last_round`` shows the previous deal's hands, revealed; and
# ``opening_tile`` is the rule "the first round opens with 6-6", which tells
# everyone (as the turn does) that the opener holds it.
NOT_SCANNED = ("last_round", "opening_tile")


def tiles_in(value: Any) -> set[Tile]:
    """Every tile ({a, b}) anywhere in a JSON value, but under the keys not scanned."""
    found: set[Tile] = set()
    if isinstance(value, dict):
        if set(value) == {"a", "b"}:
            found.add((min(value["a"], value["b"]), max(value["a"], value["b"])))
        for key, item in value.items():
            if key not in NOT_SCANNED:
                found |= tiles_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= tiles_in(item)
    return found


def hands_of(state: JSON) -> list[set[Tile]]:
    return [{(a, b) for a, b in hand} for hand in state["hands"]]


def hidden_from(hands: list[set[Tile]], viewer: int | None) -> set[Tile]:
    return set().union(*(hand for seat, hand in enumerate(hands) if seat != viewer))


def sees(event: Event, viewer: int | None) -> bool:
    return event.audience is None or (viewer is not None and viewer in event.audience)


def game_events(happened: list[Happening]) -> list[Event]:
    assert all(isinstance(e, Event) for e in happened), "no kit notice while playing"
    return [e for e in happened if isinstance(e, Event)]


def random_steps(seed: int) -> Iterator[tuple[JSON, int, JSON, Table, list[Event]]]:
    """The start (seat -1, no action) and then every play of a random match:
    the state before, the seat, its action, the table after, the events."""
    rng = MatchRng(seed.to_bytes(32, "big"))
    moves = random.Random(seed)
    table, happened = play.start(GAME, 4, {}, ctx(rng))
    yield copy.deepcopy(table.state), -1, {}, table, game_events(happened)
    while GAME.outcome(table.state) is None:
        [seat] = GAME.to_act(table.state)
        action = choose(GAME.view(table.state, seat), moves.randrange)
        before = copy.deepcopy(table.state)
        happened = play.act(GAME, table, seat, action, ctx(rng))
        yield before, seat, action, table, game_events(happened)


def tile_texts(tile: Tile) -> list[str]:
    a, b = tile
    return [f"{x}{sep}{y}" for x, y in ((a, b), (b, a)) for sep in ("-", "|", ":", ", ", "/", "x")]


def test_no_view_event_or_error_shows_another_seats_tiles_before_the_reveal() -> None:
    checked_hidden = own_seen = errors = 0
    messages: dict[str, set[str]] = {}
    for seed in range(30):
        for before, actor, _, table, events in random_steps(seed):
            after = table.state
            now = hands_of(after)
            for viewer in VIEWERS:
                view = GAME.view(after, viewer)
                if "opening_tile" in view:
                    assert view["opening_tile"] == {"a": 6, "b": 6}
                    [opener] = GAME.to_act(after)
                    assert view["round"] == 1 and view["line"] == [] and (6, 6) in now[opener]
                shown, hidden = tiles_in(view), hidden_from(now, viewer)
                assert not shown & hidden, (viewer, shown & hidden)
                checked_hidden += len(hidden)
                if viewer is not None:
                    assert now[viewer] <= shown  # the detector does find tiles: the viewer's own
                    own_seen += len(now[viewer])

            # Events up to the round's end concern the hands as they were after the play.
            hands = hands_of(before) if actor >= 0 else now
            for event in events:
                if event.kind == "played":
                    hands[actor].discard(tiles_in(event.data).pop())
                if event.kind == "round_ended":
                    hands = now  # every hand is revealed; what follows is the next deal
                    continue
                for viewer in VIEWERS:
                    if sees(event, viewer):
                        assert not tiles_in(event.data) & hidden_from(hands, viewer), (viewer, event)
                if event.kind == "dealt":
                    assert event.audience == (event.data["seat"],)

            if GAME.outcome(after) is not None:
                continue
            [seat] = GAME.to_act(after)
            other = random.Random(seed).choice([s for s in range(4) if s != seat])
            for a, b in now[other]:
                # The seat to act tries another's tile; the other seat tries it out of turn.
                for who in (seat, other):
                    with pytest.raises(RulesError) as caught:
                        play.act(GAME, copy.deepcopy(table), who, {"play": {"tile": {"a": a, "b": b}}}, ctx())
                    error = caught.value
                    text = f"{error.code} {error.message} {error}"
                    assert not any(t in text for h in hidden_from(now, who) for t in tile_texts(h))
                    messages.setdefault(error.code, set()).add(error.message)
                    errors += 1
    assert checked_hidden > 50_000 and own_seen > 10_000 and errors > 1_000
    assert {"tile_not_in_hand", "not_your_turn"} <= set(messages)
    # One fixed message per code: an error carries nothing about the state.
    assert all(len(texts) == 1 for texts in messages.values()), messages


def test_a_spectator_sees_no_hand_and_no_private_event() -> None:
    for _, _, _, table, events in random_steps(7):
        view = GAME.view(table.state, None)
        assert view["hand"] == [] and view["playable"] == [] and "seat" not in view
        assert all(event.audience is None for event in events if event.kind != "dealt")
        assert all(event.audience is not None for event in events if event.kind == "dealt")


def wire(action: JSON) -> JSON:
    """An action as the service hands it over: parsed from the proto and back."""
    message = assert_fits(domino_pb2.Action, action)
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def test_every_view_event_and_action_fits_the_proto() -> None:
    ends_seen = dict.fromkeys(EndReason, 0)
    for seed in range(16):
        rng = MatchRng(seed.to_bytes(32, "big"))
        moves = random.Random(seed)
        table, happened = play.start(GAME, 4, {}, ctx(rng))
        stop = moves.choice([None, None, moves.randrange(1, 60)])
        steps = 0
        while True:
            for event in happened:
                if isinstance(event, Event):
                    assert_event_fits(domino_pb2.Event, event)
            for viewer in VIEWERS:
                assert_fits(domino_pb2.View, GAME.view(table.state, viewer))
            if GAME.outcome(table.state) is not None:
                break
            [seat] = GAME.to_act(table.state)
            if steps == stop:
                if seed % 2:
                    happened = play.leave(GAME, table, moves.randrange(4), ctx(rng))
                else:
                    claim = wire({"claim_inactivity": {}})
                    now = table.idle_since + 120.0
                    happened = play.act(GAME, table, (seat + 1) % 4, claim, ctx(rng, now=now))
                continue
            action = wire(choose(GAME.view(table.state, seat), moves.randrange))
            happened = play.act(GAME, table, seat, action, ctx(rng))
            steps += 1
        result = GAME.outcome(table.state)
        assert result is not None
        ends_seen[result.reason] += 1
    assert all(ends_seen.values()), ends_seen
