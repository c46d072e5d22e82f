"""Dudo's computer player (services/dudo/cpu.py, issue 17): it decides from its
seat's view alone, it always makes a legal move, it respects the variants,
and CPU seats play whole games through the kit."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest
from rodada.dudo.v1 import dudo_pb2

from services.dudo import cpu
from services.dudo.game import GAME
from services.kit import play
from services.kit.engine import Context, Event, InvalidAction
from services.kit.play import Table
from services.kit.rng import MatchRng, cpu_seed
from tests import playing
from tests.proto_shapes import assert_event_fits
from tests.rigged import RiggedRng
from tests.unit.test_dudo_play import fresh, rethrow_others
from tests.unit.test_dudo_rules import DUDO, bid
from tests.unit.test_dudo_rules import Table as Rigged

JSON = dict[str, Any]
NO_BLUFF = 1  # a rigged randbelow(BLUFF_ODDS) that is not 0: the most likely raise


def choose(table: Table, seat: int, rng: Any = None) -> JSON:
    """The CPU's move for ``seat``, as the kit asks for it: from the seat's view."""
    return cpu.choose(GAME.view(table.state, seat), seat, rng or RiggedRng([NO_BLUFF]))


def random_options(rnd: random.Random) -> JSON:
    return {
        "dice_per_player": rnd.choice([1, 2, 3, 5]),
        "palifico": rnd.random() < 0.5,
        "calza": rnd.random() < 0.5,
        "open_on_ones": rnd.random() < 0.5,
    }


@dataclass(frozen=True)
class Moment:
    """A CPU seat to act, as the kit asked the policy: the table then, the
    seat, and the CPU generator as it stood."""

    table: Table
    seat: int
    rng: MatchRng


def cpu_turns(games: int) -> list[Moment]:
    """Every CPU turn of games where the kit plays CPU seats on every seat
    but one (a person playing random legal moves), over every variant. The
    policy is watched as the kit calls it: with the view of the seat to act,
    and nothing else."""
    moments: list[Moment] = []
    playing_now: list[Table] = []

    def watched(view: JSON, seat: int, rng: Any) -> JSON:
        (table,) = playing_now
        assert GAME.to_act(table.state) == [seat]
        assert view == GAME.view(table.state, seat)  # that seat's view, and only that
        moments.append(Moment(fresh(table), seat, copy.copy(rng)))
        return cpu.choose(view, seat, rng)

    game_watched = dataclasses.replace(GAME, cpu=watched)
    for game in range(games):
        rnd = random.Random(game)
        seats = rnd.randint(2, 6)
        person = rnd.randrange(seats)
        cpus = [s for s in range(seats) if s != person]
        seed = hashlib.sha256(b"dudo cpu %d" % game).digest()
        rng, cpu_rng = MatchRng(seed), MatchRng(cpu_seed(seed))
        table, _ = play.start(GAME, seats, random_options(rnd), Context(rng, 0.0, 0.0), (), cpu_rng)
        table.cpu_seats.extend(cpus)  # seated after the start, so that the watch sees this table
        playing_now.append(table)
        if GAME.to_act(table.state)[0] in cpus:
            # A CPU opens: any move of the person (here an anytime one) lets the kit play it.
            play.act(
                game_watched, table, person, {"set_assist": {"on": True}}, Context(rng, 0.0, 0.0), cpu_rng
            )
        for _ in range(2_000):
            if GAME.outcome(table.state) is not None:
                break
            (seat,) = GAME.to_act(table.state)
            assert seat == person
            assert GAME.legal is not None
            action = rnd.choice([a for a in GAME.legal(table.state, seat) if "set_assist" not in a])
            play.act(game_watched, table, seat, action, Context(rng, 0.0, 0.0), cpu_rng)
        playing_now.clear()
        assert GAME.outcome(table.state) is not None
    return moments


@pytest.fixture(scope="module")
def moments() -> list[Moment]:
    return cpu_turns(60)


# --- Only its own view ----------------------------------------------------------


def test_the_choice_never_depends_on_other_seats_hidden_dice(moments: list[Moment]) -> None:
    """Differential: the same table with everyone else's dice thrown otherwise,
    the same generator state: the same choice, and the same draws."""
    differs_with_own_dice = 0
    for moment in moments:
        table, seat = moment.table, moment.seat
        other = rethrow_others(table, seat)
        assert other.state["dice"] != table.state["dice"]
        first, second = copy.copy(moment.rng), copy.copy(moment.rng)
        assert choose(table, seat, first) == choose(other, seat, second)
        assert first.counter == second.counter
        # Not vacuous: its own dice do change what it does, now and then.
        differs_with_own_dice += choose(rethrow_others(table, None), seat, copy.copy(moment.rng)) != choose(
            table, seat, copy.copy(moment.rng)
        )
    assert len(moments) > 1_000
    assert differs_with_own_dice > len(moments) // 10


def test_through_the_kit_a_cpu_seat_decides_the_same_whatever_the_hidden_dice() -> None:
    """Differential through the kit, as the service plays a CPU seat: a
    person's bid hands the turn to a CPU seat; the same table with every
    other seat's dice (the person's too) thrown otherwise, the same CPU
    generator state: the CPU makes the same move with the same draws."""
    compared: Counter[str] = Counter()
    for number in range(40):
        rnd = random.Random(4_000 + number)
        seats = rnd.randint(2, 6)
        seed = hashlib.sha256(b"dudo differential %d" % number).digest()
        rng = MatchRng(seed)
        table, _ = play.start(GAME, seats, random_options(rnd), Context(rng, 0.0, 0.0))
        for _ in range(500):
            if GAME.outcome(table.state) is not None:
                break
            (person,) = GAME.to_act(table.state)
            assert GAME.legal is not None
            moves = [a for a in GAME.legal(table.state, person) if "set_assist" not in a]
            bids = [a for a in moves if "bid" in a]
            if not bids:  # the highest bid stands: only a call is left
                play.act(GAME, table, person, rnd.choice(moves), Context(rng, 0.0, 0.0))
                continue
            action = rnd.choice(bids)
            probe = fresh(table)  # who would act next, everyone a person
            play.act(GAME, probe, person, action, Context(MatchRng(bytes(32)), 0.0, 0.0))
            (cpu_seat,) = GAME.to_act(probe.state)
            decided = []
            for variant in (table, rethrow_others(table, cpu_seat)):
                first: list[tuple[int, JSON, int]] = []

                def watched(view: JSON, seat: int, cpu_rng: Any, first: list[Any] = first) -> JSON:
                    choice = cpu.choose(view, seat, cpu_rng)
                    if not first:
                        first.append((seat, choice, cpu_rng.counter))
                    return choice

                trial = fresh(variant)
                trial.cpu_seats[:] = [cpu_seat]
                cpu_rng = MatchRng(cpu_seed(seed), counter=number)
                play.act(
                    dataclasses.replace(GAME, cpu=watched),
                    trial,
                    person,
                    action,
                    Context(MatchRng(seed), 0.0, 0.0),
                    cpu_rng,
                )
                decided.append(first[0])
            assert table.state["dice"][cpu_seat] == rethrow_others(table, cpu_seat).state["dice"][cpu_seat]
            assert decided[0][0] == cpu_seat and decided[0] == decided[1], (decided, table.state)
            compared[next(iter(decided[0][1]))] += 1
            # The real game goes on with any move of the person's.
            play.act(GAME, table, person, rnd.choice(moves), Context(rng, 0.0, 0.0))
    assert sum(compared.values()) > 500 and compared["bid"] > 50 and compared["dudo"] > 50, compared


# --- Always legal, every variant respected ------------------------------------------


def test_every_choice_is_legal(moments: list[Moment]) -> None:
    seen: Counter[str] = Counter()
    for moment in moments:
        table, seat = moment.table, moment.seat
        action = choose(table, seat, copy.copy(moment.rng))
        assert GAME.legal is not None
        assert action in GAME.legal(table.state, seat)
        trial = fresh(table)
        trial.cpu_seats.clear()  # played as a person would, through the same move
        play.act(GAME, trial, seat, action, Context(MatchRng(bytes(32)), 0.0))  # accepted
        state = table.state
        kind = next(iter(action))
        seen[kind] += 1
        if kind == "bid":
            made = action["bid"]
            standing = state["bid"]
            if state["palifico_round"]:
                seen["palifico_bid"] += 1
                if standing is not None:
                    assert made["face"] == standing["face"]  # the face is locked
            elif standing is None and made["face"] == 1:
                assert state["options"]["open_on_ones"]
                seen["opened_on_ones"] += 1
        if kind == "calza":
            assert state["options"]["calza"]
    for kind in ("bid", "dudo", "calza", "palifico_bid", "opened_on_ones"):
        assert seen[kind] >= 5, seen


def test_it_calls_an_impossible_bid() -> None:
    table = Rigged([[2, 3, 4], [5, 6, 6]])
    table.act(0, bid(5, 5))  # seat 1 holds one 5 and sees 3 dice: five 5s cannot be
    assert choose(table.table, 1) == DUDO


def test_it_never_doubts_a_bid_its_own_dice_make_true() -> None:
    table = Rigged([[2, 3, 4], [5, 1, 5]])
    table.act(0, bid(3, 5))  # seat 1 holds three: true for sure
    # It raises to the most likely bid: four 5s, one 5 or 1 among the 3 dice
    # it cannot see (19/27).
    assert choose(table.table, 1) == bid(4, 5)


def test_it_opens_on_ones_only_when_the_table_allows_it() -> None:
    hands = [[1, 1, 1], [2, 3, 4]]
    assert choose(Rigged(hands).table, 0) == bid(3, 6)  # three sure dice, ones wild
    assert choose(Rigged(hands, open_on_ones=True).table, 0) == bid(3, 1)  # as high as six of a face


def test_in_a_palifico_round_it_keeps_the_face_and_ones_are_not_wild() -> None:
    table = Rigged([[2, 3], [4, 5]], palifico=True)
    table.act(0, bid(1, 6))
    table.act(1, DUDO, then=[[5], [1, 5]])  # seat 0 drops to one die: palifico
    table.act(0, bid(1, 5))
    assert table.state["palifico_round"]
    # Seat 1 holds 1 and 5, seat 0 one die: a raise stays on 5s.
    assert choose(table.table, 1) == bid(2, 5)  # a 1/6 chance, better than a sure wrong Dudo
    table.act(1, bid(2, 5))
    table.act(0, bid(3, 5))
    # Seat 1 again: three 5s need seat 0's die to be a 5 and seat 1's one to
    # count, which it does not, ones not being wild: impossible.
    assert choose(table.table, 1) == DUDO


def test_it_does_not_count_ones_as_wild_in_a_palifico_round() -> None:
    table = Rigged([[2, 3], [4, 5]], palifico=True)
    table.act(0, bid(1, 6))
    table.act(1, DUDO, then=[[5], [1, 5]])  # seat 0 drops to one die: palifico
    table.act(0, bid(2, 5))
    # Two 5s: sure with wild ones (seat 1 holds 1 and 5), but here only if
    # seat 0's die is a 5, 1 time in 6: Dudo.
    assert choose(table.table, 1) == DUDO


def test_it_calls_calza_when_exactness_is_likely_enough() -> None:
    table = Rigged([[2, 3], [4, 3]], palifico=True, calza=True)
    table.act(0, bid(1, 6))
    table.act(1, DUDO, then=[[6], [3, 4]])  # seat 0 drops to one die: palifico
    table.act(0, bid(1, 3))
    # Seat 1 holds one 3; seat 0's one die is another 3 only 1 time in 6: one
    # 3 is exact 5 times in 6, and Dudo surely wrong.
    assert choose(table.table, 1) == {"calza": {}}
    without = Rigged([[2, 3], [4, 3]], palifico=True)
    without.act(0, bid(1, 6))
    without.act(1, DUDO, then=[[6], [3, 4]])
    without.act(0, bid(1, 3))
    assert "calza" not in choose(without.table, 1)


# --- CPU seats through the kit --------------------------------------------------------


def test_cpu_seats_are_offered() -> None:
    assert GAME.cpu_seats and GAME.cpu is cpu.choose
    assert GAME.info().cpu_seats
    with pytest.raises(InvalidAction) as refused:
        playing.start(GAME, 3, cpu_seats=(1, 3))
    assert refused.value.code == "invalid_cpu_seats"


@pytest.mark.parametrize("seats", range(2, 7))
def test_cpu_seats_alone_play_a_whole_game(seats: int) -> None:
    """Every seat a CPU: the match is played to its end inside ``start``; the
    events told along the way stay true (each reveal shows what each seat
    was dealt that round)."""
    for game in range(10):
        seed = hashlib.sha256(b"dudo all cpu %d %d" % (seats, game)).digest()
        options = random_options(random.Random(game))
        table, happened = play.start(
            GAME,
            seats,
            options,
            Context(MatchRng(seed), 0.0, 0.0),
            tuple(range(seats)),
            MatchRng(cpu_seed(seed)),
        )
        result = GAME.outcome(table.state)
        assert result is not None
        assert sorted(result.ranks) == list(range(1, seats + 1))
        events = [item for item in happened if isinstance(item, Event)]
        dealt: dict[tuple[int, int], list[int]] = {}
        for event in events:
            assert_event_fits(dudo_pb2.Event, event)
            if event.kind == "dice_rolled":
                dealt[event.data["round"], event.data["seat"]] = event.data["dice"]
            if event.kind == "revealed":
                for hand in event.data["hands"]:
                    assert hand["dice"] == dealt[event.data["round"], hand["seat"]]
        # Each call costs one die at most: every die of the losers went that way.
        assert [e.kind for e in events].count("revealed") >= (seats - 1) * options["dice_per_player"]


def test_people_and_cpu_seats_play_together() -> None:
    """Two people with CPUs between them: after each person's move the kit
    plays the CPUs' turns until a person is to act or the match ends."""
    for game in range(20):
        seed = hashlib.sha256(b"dudo mixed %d" % game).digest()
        rng, cpu_rng = MatchRng(seed), MatchRng(cpu_seed(seed))
        rnd = random.Random(game)
        table, _ = play.start(GAME, 5, random_options(rnd), Context(rng, 0.0, 0.0), (1, 2, 4), cpu_rng)
        people = (0, 3)
        while GAME.outcome(table.state) is None:
            (seat,) = GAME.to_act(table.state)
            assert seat in people
            assert GAME.legal is not None
            action = rnd.choice([a for a in GAME.legal(table.state, seat) if "set_assist" not in a])
            play.act(GAME, table, seat, action, Context(rng, 0.0, 0.0), cpu_rng)
            if GAME.outcome(table.state) is None and rnd.random() < 0.02:
                # A person leaving mid-game: the CPUs play on without them.
                leaver = rnd.choice([p for p in people if GAME.in_play(table.state, p)])
                play.leave(GAME, table, leaver, Context(rng, 0.0, 0.0), cpu_rng)
                if GAME.outcome(table.state) is None and not any(
                    GAME.in_play(table.state, p) for p in people
                ):
                    raise AssertionError("the CPUs left alone must have played to the end")
        result = GAME.outcome(table.state)
        assert result is not None and sorted(result.ranks) == [1, 2, 3, 4, 5]


def test_a_cpu_seat_cannot_be_played_by_a_person() -> None:
    rng = RiggedRng([0, 2, 3, 4, 5, 6, 6])
    table, _ = playing.start(GAME, 2, {}, cpu_seats=(1,), rng=rng)
    assert GAME.to_act(table.state) == [0]
    playing.refused(GAME, table, 1, {"dudo": {}}, "cpu_seat")
