"""The conformance suite: every registered game (``services/<game>/game.py``),
played at random from many seeds through the kit, as OpenSpiel's random
simulation test does. A new game gets all of it by being declared.

Each playout checks, at every step: every view (each seat and a spectator)
and every event parses strictly into the game's proto; events name real
seats; the state is plain JSON that round-trips; a refused action (random
malformed and illegal ones are tried all along) changes nothing; the seats to
act are seats still in play; and at the end the result is well formed.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from services.kit import legal, play
from services.kit.engine import Context, EndReason, Event, RulesError
from services.kit.game import CPU_PLAYS, NOBODY, Game, discover, to_json
from services.kit.matches import encode
from services.kit.rng import MatchRng, cpu_seed
from tests.conftest import TEST_PACKAGES
from tests.proto_shapes import assert_fits

GAMES = discover(TEST_PACKAGES)
SEEDS = range(40)
MAX_STEPS = 5_000


def test_every_game_is_found() -> None:
    assert {"bozo", "dudo", "bozu_mekuri", "domino", "yatzy"} <= set(GAMES)


@pytest.fixture(params=sorted(GAMES), ids=sorted(GAMES))
def game(request: pytest.FixtureRequest) -> Game:
    return GAMES[request.param]


def test_the_declaration_is_complete(game: Game) -> None:
    info = game.info()
    assert info.name == game.name and info.title and info.modes
    assert game.messages.DESCRIPTOR.package == f"rodada.{game.name}.v1"
    for name in ("Options", "Action", "View", "Event"):
        assert hasattr(game.messages, name), name
    action_kinds = {f.name for f in game.messages.Action.DESCRIPTOR.oneofs_by_name["action"].fields}
    kit_moves = {play.CLAIM, play.TAKE_OVER}
    assert set(game.moves) | (action_kinds & kit_moves) == action_kinds, "every Action kind has a move"
    assert game.legal is not None, "the suite plays from the game's legal actions"
    if game.claims != NOBODY or game.leaving != CPU_PLAYS:
        assert game.depart is not None
    if game.cpu_seats or game.leaving == CPU_PLAYS:
        assert game.cpu is not None
    for mode in game.modes:
        assert mode.seats and all(s >= 1 for s in mode.seats)
        for team in mode.teams:
            assert set(team.seats) <= set(range(max(mode.seats)))


def _tables(game: Game) -> list[tuple[int, dict[str, Any], list[int]]]:
    """(seats, options, cpu seats) covering every mode at its sizes."""
    tables = []
    for mode in game.modes:
        for seats in mode.seats:
            options = dict(mode.options)
            cpus = [s for s in range(1, seats) if s % 2] if game.cpu_seats and seats > 1 else []
            tables.append((seats, options, []))
            if cpus:
                tables.append((seats, options, cpus))
    return tables


def _fuzz_action(game: Game, rnd: random.Random) -> dict[str, Any]:
    """A random action: any kind, fields filled with small random values
    (often illegal, sometimes not)."""
    oneof = game.messages.Action.DESCRIPTOR.oneofs_by_name["action"]
    field = rnd.choice(oneof.fields)
    return {field.name: _fuzz_message(field.message_type, rnd)}


def _fuzz_message(descriptor: Any, rnd: random.Random) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for field in descriptor.fields:
        if rnd.random() < 0.4:
            continue
        value = _fuzz_value(field, rnd)
        body[field.name] = (
            [value, _fuzz_value(field, rnd)][: rnd.randint(0, 2)] if _repeated(field) else value
        )
    return body


def _repeated(field: Any) -> bool:
    return bool(field.is_repeated)


def _fuzz_value(field: Any, rnd: random.Random) -> Any:
    if field.type == FieldDescriptor.TYPE_ENUM:
        return rnd.choice(field.enum_type.values).name
    if field.type == FieldDescriptor.TYPE_BOOL:
        return rnd.random() < 0.5
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return _fuzz_message(field.message_type, rnd)
    if field.type == FieldDescriptor.TYPE_STRING:
        return rnd.choice(["", "x"])
    return rnd.randint(-1, 8)


def _check_views(game: Game, table: play.Table) -> None:
    for seat in (*range(table.seats), None):
        assert_fits(game.messages.View, game.view(table.state, seat))


def _check_events(game: Game, table: play.Table, happened: list[play.Happening]) -> None:
    for item in happened:
        if isinstance(item, Event):
            message = assert_fits(game.messages.Event, {item.kind: item.data})
            assert message.WhichOneof("event") == item.kind
        if item.audience is not None:
            assert item.audience and set(item.audience) <= set(range(table.seats)), item
    # The kit's own encoding of them works too (what the service stores).
    encode(game.messages.Event, happened, 1, 0.0, game.outcome(table.state))


def _check_state(game: Game, table: play.Table) -> None:
    raw = orjson.dumps(table.state)
    assert orjson.loads(raw) == table.state, "the state is plain JSON"
    if game.outcome(table.state) is None:
        to_act = game.to_act(table.state)
        assert to_act and all(0 <= s < table.seats and game.in_play(table.state, s) for s in to_act)


def _check_outcome(game: Game, table: play.Table) -> None:
    outcome = game.outcome(table.state)
    assert outcome is not None
    n = table.seats
    assert len(outcome.ranks) == n and min(outcome.ranks) == 1 and max(outcome.ranks) <= n
    assert all(1 <= r <= n for r in outcome.ranks)
    assert outcome.scores == [] or len(outcome.scores) == n
    assert set(outcome.forfeited) <= set(range(n)) and len(set(outcome.forfeited)) == len(outcome.forfeited)
    assert outcome.reason in set(EndReason)
    assert game.to_act(table.state) == [] or game.outcome(table.state) is not None


def _refused_changes_nothing(game: Game, table: play.Table, seat: int, action: Any, ctx: Context) -> bool:
    """Try ``action`` on a copy; True if it was refused. A refusal must be a
    RulesError with a snake_case code, and the real table stays as it was."""
    before = orjson.dumps(table.state)
    trial = play.Table(
        orjson.loads(before), table.seats, table.mode, table.cpu_seats, list(table.left), table.idle_since
    )
    try:
        play.act(game, trial, seat, action, ctx)
    except RulesError as error:
        assert error.code and error.code.replace("_", "").isalnum() and error.code.islower(), error.code
        assert orjson.dumps(table.state) == before
        return True
    return False


def playout(game: Game, seed: int, seats: int, options: dict[str, Any], cpus: list[int]) -> play.Table:
    rnd = random.Random(seed)
    match_seed = seed.to_bytes(32, "big")
    rng, cpu_rng = MatchRng(match_seed), MatchRng(cpu_seed(match_seed))
    now = 1_000.0
    table, happened = play.start(game, seats, options, Context(rng, now, now), cpus, cpu_rng)
    _check_events(game, table, happened)
    left_once = False
    for _ in range(MAX_STEPS):
        _check_state(game, table)
        _check_views(game, table)
        if game.outcome(table.state) is not None:
            break
        now += rnd.choice([1.0, 1.0, 1.0, 130.0])
        ctx = Context(rng, now, table.idle_since)
        seat = game.to_act(table.state)[0]
        humans = [s for s in range(seats) if s not in table.cpu and game.in_play(table.state, s)]
        # Now and then: a random (mostly illegal) action by anyone, which
        # must be refused without a trace or be a legal one.
        if rnd.random() < 0.3 and humans:
            trier = rnd.choice(humans)
            fuzz = _fuzz_action(game, rnd)
            if not _refused_changes_nothing(game, table, trier, fuzz, ctx):
                happened = play.act(game, table, trier, fuzz, ctx, cpu_rng)
                _check_events(game, table, happened)
                continue
        # Rarely: someone leaves.
        if not left_once and humans and rnd.random() < 0.02:
            left_once = True
            happened = play.leave(game, table, rnd.choice(humans), ctx, cpu_rng)
            _check_events(game, table, happened)
            continue
        assert game.legal is not None
        choices = game.legal(table.state, seat)
        assert choices, f"{game.name}: the seat to act has no legal action"
        action = rnd.choice(choices)
        assert_fits(game.messages.Action, action)
        happened = play.act(game, table, seat, action, ctx, cpu_rng)
        _check_events(game, table, happened)
    else:
        pytest.fail(f"{game.name} seed {seed}: no end after {MAX_STEPS} steps")
    _check_outcome(game, table)
    return table


@pytest.mark.parametrize("seed", SEEDS)
def test_random_playouts(game: Game, seed: int) -> None:
    tables = _tables(game)
    seats, options, cpus = tables[seed % len(tables)]
    playout(game, seed, seats, options, cpus)


def test_legal_actions_are_accepted(game: Game) -> None:
    """Every action ``legal`` offers is accepted (on a copy), on many states."""
    rnd = random.Random(7)
    for seed in range(5):
        tables = _tables(game)
        seats, options, cpus = tables[seed % len(tables)]
        rng = MatchRng(seed.to_bytes(32, "big"))
        table, _ = play.start(game, seats, options, Context(rng, 0.0, 0.0), cpus, MatchRng(bytes(32)))
        for _ in range(60):
            if game.outcome(table.state) is not None:
                break
            seat = game.to_act(table.state)[0]
            assert game.legal is not None
            for action in game.legal(table.state, seat):
                trial = play.Table(
                    orjson.loads(orjson.dumps(table.state)),
                    seats,
                    table.mode,
                    table.cpu_seats,
                    list(table.left),
                    0.0,
                )
                play.act(
                    game, trial, seat, action, Context(MatchRng(bytes(32)), 1.0, 0.0), MatchRng(bytes(32))
                )
            play.act(
                game,
                table,
                seat,
                rnd.choice(game.legal(table.state, seat)),
                Context(rng, 1.0, 0.0),
                MatchRng(bytes(32)),
            )


def test_describe_fits_the_proto(game: Game) -> None:
    info = game.info()
    copy = json_format.ParseDict(json_format.MessageToDict(info), type(info)())
    assert copy == info
    assert isinstance(info, Message)


def _listed(game: Game, table: play.Table, seat: int) -> list[dict[str, Any]]:
    """What a snapshot lists for ``seat``, as a client reads it back: the
    LegalActions message in proto3 JSON, expanded."""
    made = legal.message(game, legal.legal_actions(game, table, seat))
    return legal.expand(json_format.MessageToDict(made, preserving_proto_field_name=True))


def _canonical(game: Game, action: dict[str, Any]) -> bytes:
    return orjson.dumps(to_json(game.action(action)), option=orjson.OPT_SORT_KEYS)


def _unlisted(game: Game, listed: list[dict[str, Any]], rnd: random.Random) -> list[dict[str, Any]]:
    """Actions close to the listed ones (each number moved by one, each list
    grown or shrunk by one, kept in increasing order as listed ones are) and
    random ones."""
    near = [_sorted_lists(_fuzz_action(game, rnd)) for _ in range(3)]
    for action in rnd.sample(listed, min(3, len(listed))):
        for path, value in _numbers(action):
            for moved in (
                [value - 1, value + 1]
                if isinstance(value, int)
                else [value[:-1], sorted([*value, 5]), sorted([*value, 0])]
            ):
                near.append(_replaced(action, path, moved))
    return near


def _after(game: Game, table: play.Table, seat: int, action: dict[str, Any]) -> bytes:
    """The table after ``action``, played on a copy with a fixed generator."""
    trial = play.Table(
        orjson.loads(orjson.dumps(table.state)),
        table.seats,
        table.mode,
        table.cpu_seats,
        list(table.left),
        table.idle_since,
    )
    play.act(game, trial, seat, action, Context(MatchRng(bytes(32)), 1.0, 0.0), MatchRng(bytes(32)))
    return orjson.dumps(trial.doc_fields(), option=orjson.OPT_SORT_KEYS)


def _sorted_lists(data: dict[str, Any]) -> dict[str, Any]:
    return {
        key: _sorted_lists(value)
        if isinstance(value, dict)
        else sorted(value)
        if isinstance(value, list) and all(type(v) is int for v in value)
        else value
        for key, value in data.items()
    }


def _numbers(data: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found: list[tuple[tuple[str, ...], Any]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            found += _numbers(value, (*prefix, key))
        elif type(value) is int or (isinstance(value, list) and all(type(v) is int for v in value)):
            found.append(((*prefix, key), value))
    return found


def _replaced(action: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    result = orjson.loads(orjson.dumps(action))
    node = result
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return result


@pytest.mark.parametrize("seed", range(6))
def test_the_listed_actions_are_exactly_the_legal_ones(game: Game, seed: int) -> None:
    """Random playouts from what a snapshot lists (Snapshot.legal, compacted
    into ranges and subsets, read back as a client would): at every step
    every listed action of every seat is accepted (on a copy), and actions
    not listed — numbers one off, lists one longer or shorter, random ones —
    are refused; the platform's own actions are not listed."""
    rnd = random.Random(seed)
    tables = _tables(game)
    seats, options, cpus = tables[seed % len(tables)]
    rng, cpu_rng = MatchRng(seed.to_bytes(32, "big")), MatchRng(bytes(32))
    table, _ = play.start(game, seats, options, Context(rng, 0.0, 0.0), cpus, cpu_rng)
    ctx = Context(MatchRng(bytes(32)), 1.0, 0.0)
    for _ in range(MAX_STEPS):
        if game.outcome(table.state) is not None:
            break
        for seat in range(seats):
            listed = _listed(game, table, seat)
            wanted = [a for a in game.legal(table.state, seat)] if game.legal else []
            if seat in table.cpu:
                assert listed == []
            canonical = {_canonical(game, a) for a in listed}
            assert len(canonical) == len(listed), "each action is listed once"
            if seat not in table.cpu and seat in game.to_act(table.state):
                assert canonical == {_canonical(game, a) for a in wanted}, (
                    "the game's legal, no more, no less"
                )
            for action in listed:
                assert not _refused_changes_nothing(game, table, seat, action, ctx), action
            for action in _unlisted(game, listed, rnd):
                kind = next(iter(action))
                if kind in (play.CLAIM, play.TAKE_OVER):
                    continue
                try:
                    known = _canonical(game, action) in canonical
                except RulesError:
                    known = False  # not even an Action: refused before the rules
                if not known and not _refused_changes_nothing(game, table, seat, action, ctx):
                    # Accepted: then only as another spelling of a listed one
                    # (Dominó's tile 6-5 for 5-6), doing exactly what it does.
                    after = _after(game, table, seat, action)
                    assert any(_after(game, table, seat, a) == after for a in listed), (seat, action)
        seat = game.to_act(table.state)[0]
        play.act(game, table, seat, rnd.choice(_listed(game, table, seat)), Context(rng, 1.0, 0.0), cpu_rng)
    else:
        pytest.fail(f"{game.name} seed {seed}: no end after {MAX_STEPS} steps")
