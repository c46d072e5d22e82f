"""Yatzy's and Bozó's computer players (issue 17): the advisors' optimal
policy (``cpu_move``) played by the kit on CPU seats, from the seat's view
alone, ties broken by the CPU's own generator stream.

Whole seeded games through the kit; every CPU choice is an action of best
value; the choice does not change when only what its seat cannot see changes
(the match generator's future dice, the faces under a Bozó cup), with the
same CPU generator state."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest

from services.bozo import advisor as bozo_advisor
from services.bozo.game import GAME as BOZO
from services.kit import play
from services.kit.engine import Context
from services.kit.game import Game
from services.kit.play import Table
from services.kit.rng import MatchRng, cpu_seed
from services.yatzy import advisor as yatzy_advisor
from services.yatzy import scoring as yatzy_scoring
from services.yatzy.game import GAME as YATZY
from tests.proto_shapes import assert_fits

JSON = dict[str, Any]
NOW = 1_000.0


@dataclass(frozen=True)
class Moment:
    """A CPU seat to act, as the kit asked the policy: the table then, the
    seat, the CPU generator as it stood, and what the policy chose."""

    table: Table
    seat: int
    rng: MatchRng
    choice: JSON


@dataclass(frozen=True)
class Setting:
    game: Game
    seats: int
    options: JSON
    cpus: tuple[int, ...]


SETTINGS = [
    Setting(YATZY, 1, {"card": "CLASSIC"}, (0,)),
    Setting(YATZY, 2, {"card": "SCANDINAVIAN"}, (1,)),
    Setting(YATZY, 3, {"card": "CLASSIC"}, (0, 2)),
    Setting(BOZO, 1, {"mode": "SOLO"}, (0,)),
    Setting(BOZO, 2, {"mode": "DUEL"}, (1,)),
    Setting(BOZO, 4, {"mode": "DUPLAS"}, (2,)),  # a CPU partner
    Setting(BOZO, 4, {"mode": "DUPLAS"}, (1, 3)),  # a CPU team
]


def best_value(game: Game, view: JSON, seat: int) -> tuple[float, dict[str, float]]:
    """The best expectation from the seat's view, and each option's."""
    if game is YATZY:
        entries = view["cards"][seat]["boxes"]
        filled = {e["box"]: e["points"] for e in entries if e["filled"]}
        advice = yatzy_advisor.advise(filled, view["dice"], view["throws_used"], view["card"])
    else:
        cards = view["cards"]
        filled = {e["box"]: e["points"] for e in cards[seat % len(cards)]["boxes"]}
        dice = [d["face"] for d in view["dice"]]
        advice = bozo_advisor.advise(filled, dice, view["throw_number"], cup_pending=view["cup_pending"])
    return advice.expected_final_score, {repr(o.action): o.expected_final_score for o in advice.options}


def play_games(setting: Setting, games: int) -> tuple[list[Moment], list[Table]]:
    """Seeded games: the CPU seats played by the kit, the other seats random
    legal moves (Bozó's people use the cup now and then). Every CPU choice
    is watched as the kit asks for it."""
    game = setting.game
    moments: list[Moment] = []
    tables: list[Table] = []
    now: list[Table] = []

    def watched(view: JSON, seat: int, rng: Any) -> JSON:
        (table,) = now
        assert game.to_act(table.state) == [seat] and seat in table.cpu
        assert view == game.view(table.state, seat)  # that seat's view, and only that
        before = copy.copy(rng)
        assert game.cpu is not None
        choice = game.cpu(view, seat, rng)
        moments.append(Moment(copy.deepcopy(table), seat, before, choice))
        return choice

    watching = dataclasses.replace(game, cpu=watched)
    for number in range(games):
        seed = hashlib.sha256(b"%s cpu %d %d" % (game.name.encode(), setting.seats, number)).digest()
        rng, cpu_rng = MatchRng(seed), MatchRng(cpu_seed(seed))
        rnd = random.Random(seed)
        # Seated after the start, so that the watch sees this table from its first move.
        table, _ = play.start(game, setting.seats, setting.options, Context(rng, NOW, NOW), (), cpu_rng)
        table.cpu_seats.extend(setting.cpus)
        now.append(table)
        # A CPU to act first: the kit plays it as soon as anything happens.
        play._cpu_turns(watching, table, Context(rng, NOW, NOW), cpu_rng)
        for _ in range(2_000):
            if game.outcome(table.state) is not None:
                break
            (seat,) = game.to_act(table.state)
            assert seat not in setting.cpus
            assert game.legal is not None
            action = rnd.choice(game.legal(table.state, seat))
            play.act(watching, table, seat, action, Context(rng, NOW, NOW), cpu_rng)
        now.clear()
        assert game.outcome(table.state) is not None
        tables.append(table)
    return moments, tables


@pytest.fixture(scope="module")
def played() -> dict[int, tuple[list[Moment], list[Table]]]:
    return {i: play_games(setting, 3) for i, setting in enumerate(SETTINGS)}


@pytest.mark.parametrize("index", range(len(SETTINGS)))
def test_cpu_seats_play_whole_seeded_games_with_best_actions(
    index: int, played: dict[int, tuple[list[Moment], list[Table]]]
) -> None:
    setting = SETTINGS[index]
    game = setting.game
    moments, tables = played[index]
    for table in tables:
        outcome = game.outcome(table.state)
        assert outcome is not None and outcome.reason == "END_REASON_COMPLETED"
        view = game.view(table.state, 0)
        rounds = 13 if view.get("card") == "CLASSIC" else 15 if game is YATZY else 10
        for card in view["cards"]:
            assert len([b for b in card["boxes"] if b.get("filled", True)]) == rounds
    kinds: Counter[str] = Counter()
    for moment in moments:
        view = game.view(moment.table.state, moment.seat)
        best, values = best_value(game, view, moment.seat)
        # Only best actions, and never the cup (worth the same, one move more).
        assert values[repr(moment.choice)] >= best - yatzy_advisor.TIE, moment.choice
        assert not moment.choice.get("throw", {}).get("cup", False)
        assert_fits(game.messages.Action, moment.choice)
        assert game.legal is not None
        legal = {wire(game, a) for a in game.legal(moment.table.state, moment.seat)}
        assert wire(game, moment.choice) in legal
        kinds[next(iter(moment.choice))] += 1
    # Every turn of every CPU seat was the CPU's: one box each.
    turns = {"CLASSIC": 13, "SCANDINAVIAN": 15}.get(setting.options.get("card", ""), 0)
    turns = turns or (5 if setting.seats == 4 else 10)
    assert kinds["score"] == turns * len(setting.cpus) * len(tables)
    assert kinds["roll" if game is YATZY else "throw"] > kinds["score"]


def wire(game: Game, action: JSON) -> bytes:
    """An action as its message's bytes: ``{"throw": {}}`` and ``{"throw":
    {"keep": [], "cup": false}}`` are the same action."""
    return bytes(game.action(action).SerializeToString(deterministic=True))


def test_same_seed_same_game() -> None:
    """A CPU game is a function of the match's seed: the record replays."""

    def run(seed: bytes) -> list[Any]:
        table, happened = play.start(
            BOZO, 2, {"mode": "DUEL"}, Context(MatchRng(seed), NOW, NOW), (0, 1), MatchRng(cpu_seed(seed))
        )
        assert BOZO.outcome(table.state) is not None  # all-CPU: over within the start
        return [h.data for h in happened if hasattr(h, "data")]

    assert run(bytes(32)) == run(bytes(32))
    assert run(bytes(32)) != run(bytes([1]) * 32)


def _choose(game: Game, table: Table, seat: int, rng: MatchRng, match_seed: bytes) -> tuple[JSON, int]:
    """The CPU move the kit makes for ``seat`` (its real path), with the match
    generator at ``match_seed``: what it chose and the CPU draws it made."""
    chosen: list[JSON] = []

    def recording(view: JSON, seat: int, cpu_rng: Any) -> JSON:
        assert game.cpu is not None
        chosen.append(game.cpu(view, seat, cpu_rng))
        return chosen[-1]

    trial = copy.deepcopy(table)
    cpu_rng = copy.copy(rng)
    play._cpu_move(
        dataclasses.replace(game, cpu=recording), trial, seat, Context(MatchRng(match_seed), NOW), cpu_rng
    )
    return chosen[0], cpu_rng.counter


@pytest.mark.parametrize("index", range(len(SETTINGS)))
def test_the_choice_ignores_the_future_dice(
    index: int, played: dict[int, tuple[list[Moment], list[Table]]]
) -> None:
    """Differential: the match generator (what the next throws will show,
    hidden from every seat) otherwise, the same CPU generator state: the same
    choice and the same CPU draws."""
    game = SETTINGS[index].game
    moments, _ = played[index]
    assert len(moments) > 20
    for moment in moments[::3]:
        first = _choose(game, moment.table, moment.seat, moment.rng, bytes(32))
        second = _choose(game, moment.table, moment.seat, moment.rng, hashlib.sha256(b"other").digest())
        assert first == second == (moment.choice, first[1])


def _under_cup(table: Table, seat: int, keep: list[int], seed: bytes) -> Table:
    """``table`` after ``seat`` threw with the cup, the faces from ``seed``."""
    trial = copy.deepcopy(table)
    trial.cpu_seats.clear()
    play.act(BOZO, trial, seat, {"throw": {"keep": keep, "cup": True}}, Context(MatchRng(seed), NOW))
    return trial


def test_bozo_choice_ignores_the_faces_under_the_cup(
    played: dict[int, tuple[list[Moment], list[Table]]],
) -> None:
    """Differential on Bozó's hidden information: a CPU seat to declare a cup
    throw whose faces differ (and differ from what it would see after TOP)
    makes the same choice with the same CPU generator state. The two sides
    are a tie: the CPU stream picks one, and both come up."""
    sides: Counter[str] = Counter()
    differs_once_seen = 0
    checked = 0
    for index, setting in enumerate(SETTINGS):
        if setting.game is not BOZO:
            continue
        for moment in played[index][0]:
            state = moment.table.state
            if state["throws"] >= 3:
                continue
            keep = [0, 3] if state["throws"] else []
            seeds = [hashlib.sha256(b"cup %d" % i).digest() for i in range(2)]
            a, b = (_under_cup(moment.table, moment.seat, keep, s) for s in seeds)
            if [a.state["dice"][i] for i in a.state["just_thrown"]] == [
                b.state["dice"][i] for i in b.state["just_thrown"]
            ]:
                continue
            assert BOZO.view(a.state, moment.seat) == BOZO.view(b.state, moment.seat)
            ra, rb = copy.copy(moment.rng), copy.copy(moment.rng)
            assert BOZO.cpu is not None
            choice_a = BOZO.cpu(BOZO.view(a.state, moment.seat), moment.seat, ra)
            choice_b = BOZO.cpu(BOZO.view(b.state, moment.seat), moment.seat, rb)
            assert choice_a == choice_b and ra.counter == rb.counter > moment.rng.counter
            sides[choice_a["declare"]["side"]] += 1
            checked += 1
            # Not vacuous: once the faces are seen (TOP), they do change its play.
            seen = []
            for trial in (a, b):
                revealed = copy.deepcopy(trial)
                play.act(
                    BOZO,
                    revealed,
                    moment.seat,
                    {"declare": {"side": "TOP"}},
                    Context(MatchRng(bytes(32)), NOW),
                )
                seen.append(
                    BOZO.cpu(BOZO.view(revealed.state, moment.seat), moment.seat, copy.copy(moment.rng))
                )
            differs_once_seen += seen[0] != seen[1]
    assert checked > 50
    assert sides["TOP"] > 5 and sides["BOTTOM"] > 5, sides
    assert differs_once_seen > checked // 10


def test_ties_are_drawn_from_the_cpu_stream_only_when_there_is_one() -> None:
    """A last Yatzy box with 1-2-3-4-5 showing: keeping any one die or none is
    the same (six equal best options: the chance of five equal dice in the two
    throws left), so the CPU stream decides; with one best option nothing is
    drawn."""
    boxes = [b for b in yatzy_scoring.boxes("CLASSIC") if b != "YATZY"]
    filled = {box: 0 for box in boxes}
    advice = yatzy_advisor.advise(filled, [1, 2, 3, 4, 5], 1)
    best = advice.best.expected_final_score
    tied = [o.action for o in advice.options if best - o.expected_final_score <= yatzy_advisor.TIE]
    assert sorted(len(t["roll"]["keep"]) for t in tied) == [0, 1, 1, 1, 1, 1]
    picks = set()
    for n in range(40):
        rng = MatchRng(hashlib.sha256(b"tie %d" % n).digest())
        pick = yatzy_advisor.choose(advice, rng)
        assert pick in tied and rng.counter >= 1
        picks.add(repr(pick))
    assert len(picks) == 6
    lone = yatzy_advisor.advise(filled, [6, 6, 6, 6, 6], 1)
    rng = MatchRng(bytes(32))
    assert yatzy_advisor.choose(lone, rng) == {"score": {"box": "YATZY"}} and rng.counter == 0
