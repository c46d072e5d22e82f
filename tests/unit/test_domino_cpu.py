"""The Dominó CPU (services/domino/cpu.py): it decides from its seat's view
alone, always plays legally, reads passes and its partner, and its seats
complete matches through the kit."""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from services.domino import cpu
from services.domino.game import GAME
from services.domino.tiles import full_set
from services.kit import play
from services.kit.engine import JSON, EndReason, Event, RulesError
from services.kit.play import Table
from services.kit.rng import MatchRng
from tests import playing
from tests.rigged import ctx
from tests.unit.test_domino_random import choose

Tile = tuple[int, int]


def key(tile: Sequence[int]) -> Tile:
    return (min(tile), max(tile))


def position(
    line: Sequence[Tile],
    hands: Mapping[int, Sequence[Tile]],
    *,
    turn: int,
    seats: Sequence[int] | None = None,
    passes: Sequence[tuple[int, int, int]] = (),
) -> Table:
    """A table in the middle of round 2: ``line`` left to right as it lies,
    laid by ``seats`` (default seat i % 4); the seat missing from ``hands``
    holds the rest; ``passes`` as (seat, left end, right end). The CPU reads
    passes as the view gives them."""
    table, _ = playing.start(GAME, 4)
    used = [key(t) for t in line] + [key(t) for hand in hands.values() for t in hand]
    [rest_seat] = [seat for seat in range(4) if seat not in hands]
    every = {**hands, rest_seat: [t for t in full_set() if t not in used]}
    assert sorted(used + list(every[rest_seat])) == full_set()
    laid_by = list(seats) if seats is not None else [i % 4 for i in range(len(line))]
    table.state.update(
        round=2,
        hands=[sorted([min(t), max(t)] for t in every[seat]) for seat in range(4)],
        line=[{"tile": list(tile), "seat": laid_by[i], "order": i} for i, tile in enumerate(line)],
        passes=[
            {"seat": seat, "left_end": left, "right_end": right, "line_length": 1}
            for seat, left, right in passes
        ],
        turn=turn,
    )
    return table


def cpu_play(table: Table, seat: int, rng_seed: int = 0) -> JSON:
    return cpu.choose(GAME.view(table.state, seat), seat, MatchRng(rng_seed.to_bytes(32, "big")))


def tile_of(action: JSON) -> Tile:
    tile = action["play"]["tile"]
    return key((tile.get("a", 0), tile.get("b", 0)))


# --- deciding from the view alone -------------------------------------------------------


def reachable_tables(seeds: range, steps: int = 200) -> list[Table]:
    """Tables of random matches, at every turn."""
    tables = []
    for seed in seeds:
        rng = MatchRng(seed.to_bytes(32, "big"))
        moves = random.Random(seed)
        table, _ = play.start(GAME, 4, {}, ctx(rng))
        for _ in range(steps):
            if GAME.outcome(table.state) is not None:
                break
            tables.append(copy.deepcopy(table))
            [seat] = GAME.to_act(table.state)
            play.act(GAME, table, seat, choose(GAME.view(table.state, seat), moves.randrange), ctx(rng))
    return tables


def reshuffled(table: Table, seat: int, rnd: random.Random, keep: Sequence[Tile] = ()) -> Table:
    """The same table with the tiles hidden from ``seat`` dealt again at random
    among the other three hands, each keeping its count (the tiles in ``keep``
    stay where they are)."""
    other = copy.deepcopy(table)
    hands = other.state["hands"]
    seats = [s for s in range(4) if s != seat]
    pool = [t for s in seats for t in hands[s] if key(t) not in keep]
    rnd.shuffle(pool)
    for s in seats:
        kept = [t for t in hands[s] if key(t) in keep]
        take = len(hands[s]) - len(kept)
        hands[s] = sorted(kept + pool[:take])
        pool = pool[take:]
    return other


def test_the_choice_never_changes_when_only_hidden_tiles_change() -> None:
    """Differential: the same table but for the hidden hands and the same
    generator state give the same play and the same draws, however the other
    three hands are dealt."""
    rnd = random.Random(17)
    compared = changed = 0
    for table in reachable_tables(range(40)):
        [seat] = GAME.to_act(table.state)
        if len(GAME.view(table.state, seat)["playable"]) < 2:
            continue
        for _ in range(3):
            other = reshuffled(table, seat, rnd)
            changed += other.state["hands"] != table.state["hands"]
            assert GAME.view(other.state, seat) == GAME.view(table.state, seat)
            for rng_seed in range(3):
                first, second = (MatchRng(rng_seed.to_bytes(32, "big")) for _ in range(2))
                mine = cpu.choose(GAME.view(table.state, seat), seat, first)
                assert cpu.choose(GAME.view(other.state, seat), seat, second) == mine
                assert first.counter == second.counter  # the same draws, too
                compared += 1
    assert compared > 1_000 and changed > 300


def test_through_the_kit_a_cpu_seat_plays_the_same_whatever_the_hidden_hands() -> None:
    """A person's play hands the turn to a CPU seat, which the kit plays at
    once from its view; re-dealing what that CPU cannot see (the person's
    tile stays in the person's hand) changes nothing it does."""
    rnd = random.Random(5)
    compared = 0
    for table in reachable_tables(range(60)):
        [person] = GAME.to_act(table.state)
        cpu_seat = (person + 1) % 4
        action = choose(GAME.view(table.state, person), rnd.randrange)
        laid = tile_of(action)
        runs = []
        for variant in (table, reshuffled(table, cpu_seat, rnd, keep=[laid])):
            trial = Table(copy.deepcopy(variant.state), 4, "standard", [cpu_seat], [], variant.idle_since)
            happened = play.act(GAME, trial, person, action, ctx(MatchRng(bytes(32))), MatchRng(b"\x07" * 32))
            runs.append([e.data for e in happened if isinstance(e, Event) and e.kind == "played"])
        first, second = runs
        if len(first) < 2 or first[1]["seat"] != cpu_seat:
            continue  # the CPU seat passed, or the round ended
        assert second[1] == first[1], "the CPU seat's play"
        compared += 1
    assert compared > 500


def test_randomness_only_breaks_ties() -> None:
    """With another generator state the CPU may pick another play only among
    plays it values the same."""
    differs = 0
    for table in reachable_tables(range(20)):
        [seat] = GAME.to_act(table.state)
        view = GAME.view(table.state, seat)
        know = cpu.Knowledge(view, seat)
        values = {}
        for option in cpu.legal_options(view):
            values[repr(option.action())] = cpu.value(know, option)
        best = max(values.values())
        picks = {repr(cpu_play(table, seat, rng_seed)) for rng_seed in range(6)}
        assert all(values[p] >= best - 1e-9 for p in picks)
        differs += len(picks) > 1
    assert differs > 0


# --- always legal -----------------------------------------------------------------------


def test_every_choice_is_a_legal_play() -> None:
    assert GAME.legal is not None
    checked = 0
    for seed in range(60):
        rng, cpu_rng = MatchRng(seed.to_bytes(32, "big")), MatchRng(bytes([seed]) * 32)
        table, _ = play.start(GAME, 4, {}, ctx(rng))
        while GAME.outcome(table.state) is None:
            [seat] = GAME.to_act(table.state)
            choice = GAME.cpu(GAME.view(table.state, seat), seat, cpu_rng)  # type: ignore[misc]
            assert choice in GAME.legal(table.state, seat)
            play.act(GAME, table, seat, choice, ctx(rng))
            checked += 1
    assert checked > 3_000


# --- through the kit --------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_four_cpu_seats_play_a_whole_match_through_the_kit(seed: int) -> None:
    rng = MatchRng(seed.to_bytes(32, "big"))
    table, happened = play.start(GAME, 4, {}, ctx(rng), cpu_seats=(0, 1, 2, 3), cpu_rng=MatchRng(bytes(32)))
    outcome = GAME.outcome(table.state)
    assert outcome is not None and max(table.state["scores"]) >= 50
    assert sorted(outcome.ranks) == [1, 1, 2, 2]
    kinds = {e.kind for e in happened if isinstance(e, Event)}
    assert {"round_started", "dealt", "played", "round_ended"} <= kinds


@pytest.mark.parametrize("cpu_seats", [(1, 3), (0, 2), (2,), (0, 1)])
def test_cpu_seats_play_beside_people_to_the_end(cpu_seats: tuple[int, ...]) -> None:
    rng, cpu_rng = MatchRng(bytes(range(32))), MatchRng(bytes(32))
    moves = random.Random(3)
    table, _ = play.start(GAME, 4, {}, ctx(rng), cpu_seats=cpu_seats, cpu_rng=cpu_rng)
    people_moves = 0
    while GAME.outcome(table.state) is None:
        [seat] = GAME.to_act(table.state)
        assert seat not in cpu_seats, "the kit plays every CPU turn before a person's"
        for cpu_seat in cpu_seats:
            with pytest.raises(RulesError) as caught:
                play.act(GAME, copy.deepcopy(table), cpu_seat, {"play": {"tile": {"a": 6, "b": 6}}}, ctx(rng))
            assert caught.value.code == "cpu_seat"
        play.act(GAME, table, seat, choose(GAME.view(table.state, seat), moves.randrange), ctx(rng), cpu_rng)
        people_moves += 1
    assert people_moves > 0


def test_a_person_who_leaves_concedes_for_their_team_cpu_partner_included() -> None:
    table, _ = play.start(
        GAME, 4, {}, ctx(MatchRng(bytes(32))), cpu_seats=(1, 2, 3), cpu_rng=MatchRng(bytes(32))
    )
    assert GAME.outcome(table.state) is None and GAME.to_act(table.state) == [0]
    happened = play.leave(GAME, table, 0, ctx())
    assert [h.kind for h in happened] == ["LEFT"]
    outcome = GAME.outcome(table.state)
    assert outcome is not None
    assert (outcome.reason, outcome.forfeited, outcome.ranks) == (EndReason.FORFEIT, [0], [2, 1, 2, 1])


# --- how it plays -------------------------------------------------------------------------


def values(table: Table, seat: int = 0) -> dict[Tile, float]:
    view = GAME.view(table.state, seat)
    know = cpu.Knowledge(view, seat)
    return {option.tile: cpu.value(know, option) for option in cpu.legal_options(view)}


# Seat 0 opened 0-1; seat 1 passed on 0 and 1; seat 2 laid 1-4, seat 3 4-5: the
# ends are 0 and 5. Seat 0 may lay 1-5 (leaving 0 and 1) or the heavier 5-6
# (leaving 0 and 6).
PASS_LINE = [(0, 1), (1, 4), (4, 5)]
PASS_HANDS: dict[int, Sequence[Tile]] = {
    0: [(1, 5), (5, 6), (2, 2), (2, 3), (3, 3), (3, 4)],
    1: [(2, 4), (2, 6), (3, 6), (4, 4), (4, 6), (6, 6), (2, 5)],
    2: [(0, 0), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3)],
}


def test_it_leaves_ends_the_next_opponent_is_known_to_lack() -> None:
    table = position(PASS_LINE, PASS_HANDS, turn=0, seats=[0, 2, 3], passes=[(1, 0, 1)])
    know = cpu.Knowledge(GAME.view(table.state, 0), 0)
    assert know.chance_to_follow(1, (0, 1)) == 0.0  # it passed on both numbers
    assert know.chance_to_follow(1, (0, 6)) > 0.5
    for rng_seed in range(5):
        assert tile_of(cpu_play(table, 0, rng_seed)) == (1, 5)
    # Without that pass the heavier tile is better.
    unknown = position(PASS_LINE, PASS_HANDS, turn=0, seats=[0, 2, 3])
    assert tile_of(cpu_play(unknown, 0)) == (5, 6)


def test_it_favours_ends_its_partner_can_play(monkeypatch: pytest.MonkeyPatch) -> None:
    # Ends 6 and 5. Seat 1 (next) is known to lack 6, 1 and 2, so it passes on
    # either play; seat 2 (the partner) lacks 2 and 6 but may hold 1s. Seat 0
    # lays 1-5 (leaving 6 and 1: the partner plays) rather than the heavier
    # 2-5 (leaving 6 and 2: the partner passes too).
    hands: dict[int, Sequence[Tile]] = {
        0: [(1, 5), (2, 5), (0, 0), (0, 3), (3, 3), (0, 4), (4, 4)],
        1: [(0, 5), (3, 4), (4, 5), (5, 5)],
        2: [(0, 1), (1, 1), (1, 3), (1, 4)],
    }
    table = position([(6, 3), (3, 5)], hands, turn=0, seats=[2, 3], passes=[(1, 6, 1), (1, 6, 2), (2, 2, 6)])
    know = cpu.Knowledge(GAME.view(table.state, 0), 0)
    assert know.chance_to_follow(1, (6, 1)) == know.chance_to_follow(1, (6, 2)) == 0.0
    assert know.chance_to_follow(2, (6, 1)) > 0.9 and know.chance_to_follow(2, (6, 2)) == 0.0
    assert tile_of(cpu_play(table, 0)) == (1, 5)
    monkeypatch.setattr(cpu, "PARTNER_PLAYS", 0.0)
    assert tile_of(cpu_play(table, 0)) == (2, 5), "the partner is what makes the difference"


def test_it_opens_with_a_heavy_double() -> None:
    # A new round (line empty, any tile opens): 6-6 is the heaviest, a double.
    hands: dict[int, Sequence[Tile]] = {
        0: [(6, 6), (0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)],
        1: [(0, 0), (0, 4), (0, 5), (0, 6), (1, 1), (1, 4), (1, 5)],
        2: [(1, 6), (2, 2), (2, 4), (2, 5), (2, 6), (3, 3), (3, 4)],
    }
    table = position([], hands, turn=0)
    assert len(GAME.view(table.state, 0)["playable"]) == 7
    assert tile_of(cpu_play(table, 0)) == (6, 6)


# All the 0s and 2s but 0-2 are on the line, whose ends are 2 and 0: seat 0's
# 0-2 closes the table on either end.
BLOCK_LINE = [(2, 1), (1, 0), (0, 0), (0, 3), (3, 2), (2, 2), (2, 4), (4, 0), (0, 5), (5, 2), (2, 6), (6, 0)]


def test_it_closes_the_table_when_its_team_likely_holds_fewer_pips() -> None:
    # Seat 0 keeps 1-1 (2 pips); its partner holds 4 of the 14 unseen tiles.
    hands: dict[int, Sequence[Tile]] = {
        0: [(0, 2), (1, 1)],
        1: [(1, 3), (1, 4), (1, 5), (1, 6), (3, 3)],
        2: [(3, 4), (3, 5), (3, 6), (4, 4)],
    }
    table = position(BLOCK_LINE, hands, turn=0)
    assert set(values(table)) == {(0, 2)}
    assert all(v > 20 for v in values(table).values())


def test_it_does_not_like_closing_the_table_with_the_heavier_team() -> None:
    # Seat 0 keeps 6-6 (12 pips); its partner holds 9 of the 14 unseen tiles.
    hands: dict[int, Sequence[Tile]] = {
        0: [(0, 2), (6, 6)],
        1: [(1, 1), (1, 3), (1, 4)],
        2: [(1, 5), (1, 6), (3, 3), (3, 4), (3, 5), (3, 6), (4, 4), (4, 5), (4, 6)],
    }
    table = position(BLOCK_LINE, hands, turn=0)
    assert all(v < 0 for v in values(table).values())


def test_it_never_needs_more_than_the_view() -> None:
    """The policy reads only what a seat's view holds, and tolerates the
    proto's omitted zero values."""
    table = position(PASS_LINE, PASS_HANDS, turn=0, seats=[0, 2, 3], passes=[(1, 0, 1)])
    view: dict[str, Any] = GAME.view(table.state, 0)
    sparse = copy.deepcopy(view)
    for item in [
        *sparse["hand"],
        *(p["tile"] for p in sparse["playable"]),
        *(p["tile"] for p in sparse["line"]),
    ]:
        for half in ("a", "b"):
            if item[half] == 0:
                del item[half]
    for passed in sparse["passes"]:
        for name in ("left_end", "right_end"):
            if passed[name] == 0:
                del passed[name]
    assert cpu.choose(sparse, 0, MatchRng(bytes(32))) == cpu.choose(view, 0, MatchRng(bytes(32)))
