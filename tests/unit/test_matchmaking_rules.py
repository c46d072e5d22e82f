"""The matchmaker's formation rules: pure functions, no Redis, no clock. The
queues' formats come from the games' real declarations (their GameInfo, as
the gateway learns it from Describe)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from rodada.common.v1 import match_pb2

from gateway.matchmaking.rules import (
    CASUAL_CANDIDATES,
    Format,
    Formation,
    Waiting,
    cycles_waited,
    estimate_wait,
    form_tables,
    queue_format,
    queue_mode,
    rating_window,
)
from gateway.settings import MatchmakingSettings
from services.bozo.game import GAME as BOZO_GAME
from services.bozu_mekuri.game import GAME as BOZU_GAME
from services.domino.game import GAME as DOMINO_GAME
from services.dudo.game import GAME as DUDO_GAME
from services.yatzy.game import GAME as YATZY_GAME

RULES = MatchmakingSettings(
    cycle_seconds=2.0,
    window_start=100,
    window_step=50,
    window_cap=400,
    fill_wait_seconds=10,
    cpu_wait_seconds=45,
)
BOZO = BOZO_GAME.info()
DOMINO_INFO = DOMINO_GAME.info()
DUDO_INFO = DUDO_GAME.info()
YATZY_INFO = YATZY_GAME.info()
BOZU_INFO = BOZU_GAME.info()


def fmt(info: match_pb2.GameInfo, options: dict[str, str] | None = None) -> Format:
    return queue_format(info, queue_mode(info, options or {}))


DUEL = fmt(BOZO, {"mode": "DUEL"})
DUPLAS = fmt(BOZO, {"mode": "DUPLAS"})
DOMINO = fmt(DOMINO_INFO)
DUDO = fmt(DUDO_INFO)
YATZY = fmt(YATZY_INFO)
BOZU = fmt(BOZU_INFO)


def without_cpus(queue: Format) -> Format:
    """The same queue for a game without CPU seats: what waits for people only."""
    return dataclasses.replace(queue, cpu_table=0)


def solo(name: str, rating: float = 1500, at: float = 0.0) -> Waiting:
    return Waiting(f"t-{name}", (name,), rating, at)


def party(a: str, b: str, rating: float = 1500, at: float = 0.0) -> Waiting:
    return Waiting(f"t-{a}{b}", (a, b), rating, at)


def players(formation: Formation) -> list[str | None]:
    return [seat[1] if seat else None for seat in formation.seats]


def form(tickets: list[Waiting], fmt: Format, now: float, ranked: bool = False) -> list[list[str | None]]:
    return [players(f) for f in form_tables(tickets, fmt, RULES, now, ranked)]


# -- queues ------------------------------------------------------------------------


def test_queue_modes_and_formats() -> None:
    assert queue_mode(BOZO, {"mode": "DUEL"}).name == "duel"
    assert queue_mode(BOZO, {"mode": "DUPLAS"}).name == "duplas"
    # Solo is not queued, and a queue needs its mode chosen.
    for not_queued in ({"mode": "SOLO"}, {}):
        with pytest.raises(ValueError, match="options select exactly one of") as refused:
            queue_mode(BOZO, not_queued)
        assert "DUEL" in str(refused.value) and "DUPLAS" in str(refused.value)
    assert queue_mode(YATZY_INFO, {"card": "SCANDINAVIAN"}).name == "standard"
    assert queue_mode(DUDO_INFO, {"dice_per_player": 3}).name == "standard"
    # Bozó and Dominó have CPU seats (issue 17): their fixed tables fill with CPUs.
    assert (DUEL.sizes, DUEL.teams, DUEL.cpu_table) == ((2,), (), 2)
    assert (DUPLAS.sizes, DUPLAS.teams, DUPLAS.cpu_table) == ((4,), ((0, 2), (1, 3)), 4)
    assert (DOMINO.sizes, DOMINO.teams, DOMINO.cpu_table) == ((4,), ((0, 2), (1, 3)), 4)
    # Yatzy's 1 and 7-8 seats are not queued; flexible tables have no teams.
    assert (YATZY.sizes, YATZY.teams, YATZY.cpu_table) == ((2, 3, 4, 5, 6), (), 4)
    # Every game with CPU seats fills a lone ticket's table: a table of 4 where the size varies.
    assert DUDO == BOZU and (DUDO.sizes, DUDO.teams, DUDO.cpu_table) == ((2, 3, 4, 5, 6), (), 4)
    assert DUPLAS.parties and DOMINO.parties and not DUEL.parties and not DUDO.parties and not YATZY.parties


# -- rating windows ------------------------------------------------------------------


def test_the_window_widens_every_cycle_up_to_the_cap() -> None:
    widths = [rating_window(RULES, 0.0, now) for now in (0, 1.9, 2, 3.9, 4, 6, 8, 10, 12, 14, 100, 10_000)]
    assert widths == [100, 100, 150, 150, 200, 250, 300, 350, 400, 400, 400, 400]
    assert cycles_waited(RULES, 10.0, 9.0) == 0  # a clock a little behind never narrows it


def test_ranked_tickets_pair_only_within_both_windows() -> None:
    a, b = solo("a", 1500, at=0), solo("b", 1650, at=0)
    assert form([a, b], DUEL, now=0, ranked=True) == []  # gap 150 > ±100
    assert form([a, b], DUEL, now=1.9, ranked=True) == []
    assert form([a, b], DUEL, now=2, ranked=True) == [["a", "b"]]  # one cycle: ±150
    # Casual queues ignore ratings.
    assert form([a, b], DUEL, now=0) == [["a", "b"]]


def test_both_windows_must_fit_the_gap() -> None:
    # The old ticket accepts ±400 already; the newcomer's window decides:
    # 100 + 50k after k cycles, so the gap of 300 fits from k = 4 (8 s).
    old, new = solo("old", 1500, at=0), solo("new", 1800, at=100)
    for now, expected in ((100, []), (106, []), (107.9, []), (108, [["old", "new"]])):
        assert form([old, new], DUEL, now=now, ranked=True) == expected


def test_beyond_the_cap_never_pairs() -> None:
    a, b = solo("a", 1000), solo("b", 1401)
    assert form([a, b], DUEL, now=10_000, ranked=True) == []
    assert form([a, solo("c", 1400)], DUEL, now=10_000, ranked=True) == [["a", "c"]]


def test_the_oldest_ticket_pairs_with_the_closest_rating() -> None:
    tickets = [solo("a", 1500), solo("far", 1590, at=1), solo("near", 1510, at=2), solo("x", 1595, at=3)]
    assert form(tickets, DUEL, now=3, ranked=True) == [["a", "near"], ["far", "x"]]
    # Casual: queue order.
    assert form(tickets, DUEL, now=3) == [["a", "far"], ["near", "x"]]


# -- parties and teams ------------------------------------------------------------------


def test_a_party_sits_as_partners() -> None:
    tickets = [solo("s1", at=0), party("p1", "p2", at=1), solo("s2", at=2)]
    (seats,) = form(tickets, DUPLAS, now=2)
    assert {seats[0], seats[2]} == {"s1", "s2"} and {seats[1], seats[3]} == {"p1", "p2"}
    (seats,) = form([party("a", "b"), party("c", "d", at=1)], DOMINO, now=1)
    assert seats == ["a", "c", "b", "d"]  # teams 0 & 2 and 1 & 3


def test_a_party_never_splits_or_takes_one_seat() -> None:
    # Three solos and a party: the party cannot fill the last seat, a fourth
    # solo can; the party waits for another party or two solos.
    tickets = [solo("a", at=0), solo("b", at=1), solo("c", at=2), party("p", "q", at=3)]
    (seats,) = form(tickets, DOMINO, now=3)
    assert sorted(s for s in seats if s) == ["a", "b", "p", "q"]  # a search, not greedy: skips c
    assert {seats[1], seats[3]} == {"p", "q"} or {seats[0], seats[2]} == {"p", "q"}
    # Without CPU seats a solo and a party wait however long; Bozó duplas
    # (CPU seats since issue 17) until the CPU wait.
    assert form([solo("a"), party("p", "q", at=1)], without_cpus(DUPLAS), now=10_000) == []
    assert form([solo("a"), party("p", "q", at=1)], DUPLAS, now=44) == []
    # Dominó before the CPU wait: the same.
    assert form([solo("a"), party("p", "q", at=1)], DOMINO, now=44) == []


def test_ranked_teams_are_balanced() -> None:
    tickets = [solo("w", 1400), solo("x", 1450, at=1), solo("y", 1550, at=2), solo("z", 1600, at=3)]
    (seats,) = form(tickets, DUPLAS, now=100, ranked=True)
    teams = [{seats[0], seats[2]}, {seats[1], seats[3]}]
    assert {"w", "z"} in teams and {"x", "y"} in teams
    # A ranked party counts with its mean rating.
    (seats,) = form([party("a", "b", 1500), party("c", "d", 1550, at=1)], DOMINO, now=0, ranked=True)
    assert seats == ["a", "c", "b", "d"]
    assert form([party("a", "b", 1500), party("c", "d", 1700, at=1)], DOMINO, now=0, ranked=True) == []


# -- flexible tables and CPUs --------------------------------------------------------------


def test_largest_table_after_a_short_wait() -> None:
    three = [solo(n, at=i) for i, n in enumerate("abc")]
    assert form(three, YATZY, now=9.9) == []  # nothing too early
    assert form(three, YATZY, now=10) == [["a", "b", "c"]]
    # A full table of 6 forms at once; the rest wait for their own time.
    eight = [solo(n, at=i * 0.1) for i, n in enumerate("abcdefgh")]
    assert form(eight, YATZY, now=1) == [list("abcdef")]
    assert form(eight, YATZY, now=10.7) == [list("abcdef"), ["g", "h"]]
    assert form([solo("alone")], without_cpus(YATZY), now=10_000) == []  # no CPUs: never alone
    # The same with a game that has CPU seats: people first, at the short wait.
    assert form(three, DUDO, now=10) == [["a", "b", "c"]]
    assert form(eight, DUDO, now=1) == [list("abcdef")]


def test_ranked_flexible_tables_hold_only_mutually_compatible_players() -> None:
    tickets = [solo("a", 1500), solo("b", 1580, at=1), solo("c", 1420, at=2), solo("d", 1700, at=3)]
    # now=12: a ±400, b and c ±350 (5 cycles), d ±300 (4): every gap fits,
    # the widest (c-d, 280) too.
    (table,) = form(tickets, DUDO, now=12, ranked=True)
    assert sorted(p for p in table if p) == ["a", "b", "c", "d"]
    # now=10: a ±350, b and c ±300, d ±250 (3 cycles): c-d (280) no longer
    # fits, so d, the farthest from a, is left out.
    (table,) = form(tickets, DUDO, now=10, ranked=True)
    assert sorted(p for p in table if p) == ["a", "b", "c"]


@pytest.mark.parametrize("queue", [BOZU, DUDO, YATZY], ids=["bozu_mekuri", "dudo", "yatzy"])
def test_a_lone_ticket_is_seated_with_cpus_after_the_long_wait(queue: Format) -> None:
    # Issue 17: every game with CPU seats, not only Bozu Mekuri.
    lonely = solo("ana", at=0)
    assert form([lonely], queue, now=44.9) == []
    formation = form_tables([lonely], queue, RULES, 45, False)[0]
    assert players(formation) == ["ana", None, None, None] and formation.cpu_seats == (1, 2, 3)
    # Never in a ranked queue: a rating moves only between people.
    assert form([lonely], queue, now=10_000, ranked=True) == []
    # Two players form a table of two after the short wait, never with CPUs.
    assert form([lonely, solo("bia", at=1)], queue, now=11) == [["ana", "bia"]]


def test_a_lone_party_fills_its_team_with_cpus() -> None:
    # Dominó, casual: a party alone after the long wait sits as partners
    # (team 0: seats 0 & 2), the computer plays the other team.
    lonely = party("ana", "bia", at=0)
    assert form([lonely], DOMINO, now=44.9) == []
    (formation,) = form_tables([lonely], DOMINO, RULES, 45, False)
    assert players(formation) == ["ana", None, "bia", None] and formation.cpu_seats == (1, 3)
    (formation,) = form_tables([solo("caio")], DOMINO, RULES, 45, False)
    assert players(formation) == ["caio", None, None, None]
    assert form([lonely], DOMINO, now=10_000, ranked=True) == []
    # Bozó duplas the same (CPU seats since issue 17); without CPU seats, never.
    (formation,) = form_tables([lonely], DUPLAS, RULES, 45, False)
    assert players(formation) == ["ana", None, "bia", None] and formation.cpu_seats == (1, 3)
    assert form([lonely], without_cpus(DUPLAS), now=10_000) == []
    # A Bozó duel: a lone ticket against one CPU.
    (formation,) = form_tables([solo("caio")], DUEL, RULES, 45, False)
    assert players(formation) == ["caio", None] and formation.cpu_seats == (1,)


def test_bot_fill_off_never_seats_cpus() -> None:
    """MATCHMAKER_CPU_WAIT_SECONDS=0 turns bot fill off: a lone casual ticket
    waits for people however long it has waited; people still form tables."""
    off = RULES.model_copy(update={"cpu_wait_seconds": 0})
    assert not off.bot_fill and RULES.bot_fill
    for queue, lonely in ((DUDO, solo("ana")), (BOZU, solo("ana")), (DOMINO, party("ana", "bia"))):
        assert form_tables([lonely], queue, off, 10_000, False) == []
        assert form_tables([lonely], queue, RULES, 10_000, False) != []
    (formation,) = form_tables([solo("ana"), solo("bia", at=1)], DUDO, off, 11, False)
    assert players(formation) == ["ana", "bia"]


def test_bot_fill_settings_are_checked() -> None:
    assert MatchmakingSettings(fill_wait_seconds=10, cpu_wait_seconds=0).bot_fill is False
    for bad in ({"fill_wait_seconds": 10, "cpu_wait_seconds": 5}, {"cpu_wait_seconds": -1}):
        with pytest.raises(ValidationError, match="wait"):
            MatchmakingSettings(**bad)


def test_people_waiting_for_a_cpu_table_share_it() -> None:
    # Three people waiting for a Dominó table play together with one CPU,
    # spread across the teams, rather than three tables of one person.
    waiting = [solo("ana", at=0), solo("bia", at=1), solo("caio", at=2)]
    (formation,) = form_tables(waiting, DOMINO, RULES, 45, False)
    assert players(formation) == ["ana", "bia", "caio", None] and formation.cpu_seats == (3,)
    # A party and a solo: the party as partners, the solo against them.
    (formation,) = form_tables([solo("ana", at=0), party("bia", "caio", at=1)], DOMINO, RULES, 45, False)
    assert players(formation) == ["ana", "bia", None, "caio"]
    # Two parties make a full table, CPUs or not.
    (formation,) = form_tables(
        [party("ana", "bia", at=0), party("caio", "davi", at=1)], DOMINO, RULES, 1, False
    )
    assert formation.cpu_seats == ()


def test_nothing_forms_too_early() -> None:
    assert form([solo("a")], without_cpus(DUEL), now=10_000) == []
    assert form([solo("a")], DUEL, now=44) == []
    assert form([solo("a"), solo("b"), solo("c")], without_cpus(DUPLAS), now=10_000) == []
    assert form([solo("a"), solo("b"), solo("c")], DUPLAS, now=44) == []
    assert form([solo("a"), solo("b"), solo("c")], DOMINO, now=44) == []
    assert form([solo("a"), solo("b"), solo("c")], DOMINO, now=10_000, ranked=True) == []
    assert form([solo("a"), solo("b")], DUDO, now=9) == []


def test_a_player_is_never_seated_twice() -> None:
    # The Redis side allows one live ticket per player; the rules do not trust it.
    assert form([solo("a"), Waiting("t-a2", ("a",), 1500, 1)], DUEL, now=5) == []
    # Not with CPUs either: each ticket gets a table of its own, never both one.
    tables = form_tables([solo("a"), Waiting("t-a2", ("a",), 1500, 1)], DUDO, RULES, 100, False)
    assert all(len(f.ticket_ids) == 1 for f in tables)


def test_estimated_wait() -> None:
    assert estimate_wait([], 3) is None
    assert estimate_wait([4, 10, 6], 1) == 5
    assert estimate_wait([4, 10, 6], 30) == 0


# -- properties ---------------------------------------------------------------------------

units = st.lists(st.tuples(st.booleans(), st.integers(1200, 1800), st.floats(0, 60)), min_size=0, max_size=14)


@settings(max_examples=300, deadline=None)
@given(units, st.sampled_from([DUEL, DUPLAS, DOMINO, DUDO, YATZY, BOZU]), st.booleans(), st.floats(0, 120))
def test_every_formation_is_legal(
    spec: list[tuple[bool, int, float]], fmt: Format, ranked: bool, now: float
) -> None:
    tickets = []
    for i, (is_party, rating, at) in enumerate(spec):
        members = (f"u{i}a", f"u{i}b") if is_party and fmt.parties else (f"u{i}a",)
        tickets.append(Waiting(f"t{i}", members, rating, min(at, now)))
    by_id = {t.ticket_id: t for t in tickets}
    seen: set[str] = set()
    for formation in form_tables(tickets, fmt, RULES, now, ranked):
        ids = formation.ticket_ids
        assert not seen & set(ids), "a ticket in two tables"
        seen |= set(ids)
        humans = [s for s in formation.seats if s]
        assert len({user for _, user in humans}) == len(humans)
        # Every member of every chosen ticket is seated: nobody is left behind.
        assert sorted(user for _, user in humans) == sorted(u for t in ids for u in by_id[t].members)
        if formation.cpu_seats:
            # CPUs only in casual queues of games with CPU seats, at the
            # table of a ticket that waited the long wait (it sits first).
            assert fmt.cpu_table and not ranked and len(formation.seats) == fmt.cpu_table
            assert now - by_id[ids[0]].enqueued_at >= RULES.cpu_wait_seconds
            # Where the size varies, a second person makes a table without CPUs.
            if len(fmt.sizes) > 1:
                assert len(ids) == 1
        else:
            assert len(formation.seats) in fmt.sizes
        for team in fmt.teams:  # a party's two players on one side
            team_tickets = [seat[0] for s in team if (seat := formation.seats[s])]
            for ticket_id in team_tickets:
                if by_id[ticket_id].size == 2:
                    assert team_tickets.count(ticket_id) == 2
        if ranked:
            chosen = [by_id[t] for t in ids]
            for a in chosen:
                for b in chosen:
                    windows = [rating_window(RULES, t.enqueued_at, now) for t in (a, b)]
                    assert abs(a.rating - b.rating) <= min(windows)


# -- a burst ------------------------------------------------------------------------


def test_a_burst_of_thousands_pairs_everyone_in_queue_order() -> None:
    burst = [solo(f"p{i:04d}", at=i / 1000) for i in range(5000)]
    tables = form(burst, DUEL, now=10)
    assert tables == [[f"p{i:04d}", f"p{i + 1:04d}"] for i in range(0, 5000, 2)]


def test_an_anchor_looks_past_its_first_candidates_when_they_make_no_table() -> None:
    """A solo ahead of more parties than the first look covers still gets the
    solo behind them as its table's fourth (the parties then pair up)."""
    lone = solo("lone", at=0)
    # An odd number of parties: one joins the solos, the rest pair up evenly
    # (a party left over would get a table with CPU partners after this wait).
    parties = [party(f"a{i}", f"b{i}", at=1 + i) for i in range(CASUAL_CANDIDATES + 3)]
    late = solo("late", at=1000)
    tables = form([lone, *parties, late], DUPLAS, now=2000)
    assert sorted(p or "" for p in tables[0]) == sorted(["lone", "a0", "b0", "late"])
    rest = [sorted(p or "" for p in t) for t in tables[1:]]
    assert rest == [
        sorted([f"a{i}", f"b{i}", f"a{i + 1}", f"b{i + 1}"]) for i in range(1, len(parties) - 1, 2)
    ]
