"""How well the advisors play: seeded solo games with their best action.

    python -m tools.advisor_strength [--games 100000] [--seed 2026] [--workers 2]
                                     [--engine-games 0]

Plays ``--games`` solo games per card (Yatzy classic, Yatzy Scandinavian,
Bozó) choosing every action as the advisors' ``best_action`` would, and
prints the mean final total with its 95% confidence interval next to the
advisor's optimal expectation from an empty card: if the tables are right
and the policy is the one they describe, the interval holds the optimum
about 95 times in 100.

The games are not played through the services (too slow for 10^5 games):
dice and cards are simulated directly, a block of games in lockstep as
numpy arrays. Decisions use the advisors' own pieces — the model's
``box_choices`` for scoring and ``turn`` for re-throws, with the same
candidate order and the same first-best tie-break as ``advise`` — and the
points scored come from the model's tables of the engines' scoring
functions. Each block has its own random stream derived from the seed and
the block's number, so the figures depend on ``--seed`` and ``--games``
only, not on how many processes share the work.

The simulation takes the first of equally good actions where a CPU seat draws
one from its generator stream (``services.yatzy.advisor.choose``); equal
options have equal expectations, so the mean is the same. ``--engine-games
N`` checks that claim on the real thing: N solo games per card played by the
kit with the CPU on the only seat (``play.start`` with ``cpu_seats=[0]``:
the seat's view, the policy, ties from the CPU stream, the engine's dice
from the match generator, seeded per game), about 80 ms a Yatzy game, so
thousands rather than the simulation's hundred thousand.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import multiprocessing
import multiprocessing.pool
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from services.bozo.advisor import BozoAdvisor
from services.bozo.game import GAME as BOZO
from services.kit import play
from services.kit.engine import Context
from services.kit.game import Game
from services.kit.rng import MatchRng, cpu_seed
from services.yatzy import scoring
from services.yatzy.advisor import (
    DICE,
    DICE_SPACE,
    FACES,
    MAX_THROWS,
    UPPER_STATES,
    FloatArray,
    IntArray,
    TurnValues,
    Workspace,
    YatzyAdvisor,
)
from services.yatzy.game import GAME as YATZY

BLOCK = 1024  # games played in lockstep; also the widest turn computed at once
CARDS = ("yatzy-classic", "yatzy-scandinavian", "bozo")


class SoloModel(Protocol):
    """What a simulation needs from a Yatzy or Bozó model."""

    n: int

    def turn(
        self, table: FloatArray, masks: IntArray, uppers: IntArray, ws: Workspace | None = None
    ) -> TurnValues: ...

    def box_choices(
        self, table: FloatArray, masks: IntArray, uppers: IntArray, rolls: IntArray, first_throw: bool = False
    ) -> tuple[FloatArray, FloatArray]: ...

    def after(
        self, masks: IntArray, uppers: IntArray, boxes: IntArray, rolls: IntArray
    ) -> tuple[IntArray, IntArray]: ...

    def value(self, table: FloatArray, masks: IntArray, uppers: IntArray) -> FloatArray: ...


def load(card: str) -> tuple[SoloModel, FloatArray]:
    """The card's model and table (from the cache, built there if missing)."""
    if card == "bozo":
        bozo = BozoAdvisor()
        return bozo.model, bozo.table
    yatzy = YatzyAdvisor(scoring.CLASSIC if card == "yatzy-classic" else scoring.SCANDINAVIAN)
    return yatzy.model, yatzy.table


# Count vector and size of every multiset, to throw around kept dice.
_COUNTS = np.array([[m.count(f) for f in range(1, FACES + 1)] for m in DICE_SPACE.multisets], dtype=np.intp)
_SIZES = _COUNTS.sum(axis=1)
_CODE_WEIGHTS = FACES ** np.arange(FACES, dtype=np.intp)


def throw(rng: np.random.Generator, kept: IntArray) -> IntArray:
    """Roll rows after keeping the multisets ``kept`` and throwing the rest.

    Always draws five dice per game (the unused ones are ignored) so that a
    block consumes its random stream the same way whatever is kept."""
    faces = rng.integers(0, FACES, size=(len(kept), DICE))
    thrown = np.arange(DICE)[None, :] < (DICE - _SIZES[kept])[:, None]
    counts = _COUNTS[kept] + ((faces[:, :, None] == np.arange(FACES)) & thrown[:, :, None]).sum(axis=1)
    return np.asarray(DICE_SPACE.roll_of_code[counts @ _CODE_WEIGHTS], dtype=np.intp)


def rethrow_choice(
    model: SoloModel,
    table: FloatArray,
    turn: TurnValues,
    columns: IntArray,
    masks: IntArray,
    uppers: IntArray,
    rolls: IntArray,
    used: int,
) -> tuple[npt.NDArray[np.bool_], IntArray]:
    """After ``used`` throws (1 or 2), per position: does the advisor
    re-throw, and which multiset (row) does it keep? ``turn`` holds the
    positions' states, position i in column ``columns[i]``. As ``advise``
    ranks the options: a re-throw must be strictly better than the best box,
    and the first best keep (in ``DICE_SPACE.keeps`` order) wins."""
    values, _ = model.box_choices(table, masks, uppers, rolls, first_throw=used == 1)
    rows = np.arange(len(rolls))
    keep_rows = DICE_SPACE.keep_rows[rolls]
    keeps = turn.before_throw(used)[keep_rows, columns[:, None]]
    pick = keeps.argmax(axis=1)
    return keeps[rows, pick] > values.max(axis=1), keep_rows[rows, pick]


def box_choice(
    model: SoloModel, table: FloatArray, masks: IntArray, uppers: IntArray, rolls: IntArray, first_throw: bool
) -> tuple[IntArray, FloatArray]:
    """Per position: the box the advisor scores (the first best in card
    order) and the points that adds to the card."""
    values, gains = model.box_choices(table, masks, uppers, rolls, first_throw=first_throw)
    boxes = values.argmax(axis=1)
    return boxes, gains[np.arange(len(boxes)), boxes]


def play_block(model: SoloModel, table: FloatArray, seed: Sequence[int], games: int) -> IntArray:
    """Final totals of ``games`` solo games from an empty card, every decision
    the advisor's best action, dice from ``np.random.default_rng(seed)``."""
    rng = np.random.default_rng(list(seed))
    masks = np.zeros(games, dtype=np.intp)
    uppers = np.zeros(games, dtype=np.intp)
    totals = np.zeros(games, dtype=np.float64)
    ws = Workspace(games)
    everyone = np.arange(games)
    for _ in range(model.n):
        # One turn computation per distinct state among the games.
        states, columns = np.unique(masks * UPPER_STATES + uppers, return_inverse=True)
        turn = model.turn(table, states // UPPER_STATES, states % UPPER_STATES, ws.view(len(states)))
        rolls = throw(rng, np.zeros(games, dtype=np.intp))
        throws = np.ones(games, dtype=np.intp)
        playing = everyone
        for used in range(1, MAX_THROWS):
            rethrow, kept = rethrow_choice(
                model, table, turn, columns[playing], masks[playing], uppers[playing], rolls[playing], used
            )
            playing = playing[rethrow]
            rolls[playing] = throw(rng, kept[rethrow])
            throws[playing] = used + 1
        for first in (True, False):
            who = everyone[(throws == 1) == first]
            boxes, gains = box_choice(model, table, masks[who], uppers[who], rolls[who], first)
            totals[who] += gains
            masks[who], uppers[who] = model.after(masks[who], uppers[who], boxes, rolls[who])
    return np.asarray(np.rint(totals), dtype=np.intp)


# --- Running it on every core -----------------------------------------------------

_LOADED: dict[str, tuple[SoloModel, FloatArray]] = {}


def _block_task(task: tuple[str, int, int, int]) -> IntArray:
    card, seed, index, games = task
    if card not in _LOADED:
        _LOADED[card] = load(card)
    model, table = _LOADED[card]
    return play_block(model, table, (seed, CARDS.index(card), index), games)


@dataclass(frozen=True)
class Strength:
    card: str
    games: int
    mean: float
    sd: float
    optimum: float
    seconds: float

    @property
    def half_width(self) -> float:
        """Half the 95% confidence interval of the mean (normal approximation)."""
        return 1.959964 * self.sd / math.sqrt(self.games)


def measure(card: str, games: int, seed: int, pool: multiprocessing.pool.Pool) -> Strength:
    model, table = load(card)
    optimum = float(model.value(table, np.array([0]), np.array([0]))[0])
    tasks = [(card, seed, i, min(BLOCK, games - start)) for i, start in enumerate(range(0, games, BLOCK))]
    began = time.perf_counter()
    scores = np.concatenate(pool.map(_block_task, tasks, chunksize=1))
    seconds = time.perf_counter() - began
    return Strength(card, games, float(scores.mean()), float(scores.std(ddof=1)), optimum, seconds)


ENGINE_BLOCK = 250  # kit-played games per task
ENGINE_GAMES: dict[str, tuple[Game, dict[str, str]]] = {
    "yatzy-classic": (YATZY, {"card": "CLASSIC"}),
    "yatzy-scandinavian": (YATZY, {"card": "SCANDINAVIAN"}),
    "bozo": (BOZO, {"mode": "SOLO"}),
}


def engine_block(task: tuple[str, int, int, int]) -> list[int]:
    """Final totals of solo games the kit plays with a CPU seat, one match
    seed per game (from the run's seed, the card and the game's number)."""
    card, seed, first, games = task
    game, options = ENGINE_GAMES[card]
    scores: list[int] = []
    for number in range(first, first + games):
        match_seed = hashlib.sha256(f"advisor strength {seed} {card} {number}".encode()).digest()
        ctx = Context(MatchRng(match_seed), 0.0, 0.0)
        table, _ = play.start(game, 1, options, ctx, (0,), MatchRng(cpu_seed(match_seed)))
        assert game.outcome(table.state) is not None and game.scores is not None
        scores.append(game.scores(table.state)[0])
    return scores


def measure_engine(card: str, games: int, seed: int, pool: multiprocessing.pool.Pool) -> Strength:
    model, table = load(card)
    optimum = float(model.value(table, np.array([0]), np.array([0]))[0])
    tasks = [(card, seed, start, min(ENGINE_BLOCK, games - start)) for start in range(0, games, ENGINE_BLOCK)]
    began = time.perf_counter()
    scores = np.array(
        [s for block in pool.map(engine_block, tasks, chunksize=1) for s in block], dtype=np.float64
    )
    seconds = time.perf_counter() - began
    return Strength(card, games, float(scores.mean()), float(scores.std(ddof=1)), optimum, seconds)


def report(s: Strength) -> None:
    low, high = s.mean - s.half_width, s.mean + s.half_width
    inside = "in" if low <= s.optimum <= high else "OUT"
    print(
        f"{s.card:<20} {s.mean:>10.3f}   [{low:>8.3f}, {high:>8.3f}] {s.sd:>7.2f} "
        f"{s.optimum:>12.6f} {s.seconds:>7.1f}s  optimum {inside}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=100_000, help="solo games per card (default 100000)")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the dice (default 2026)")
    parser.add_argument("--workers", type=int, default=multiprocessing.cpu_count(), help="processes")
    parser.add_argument(
        "--engine-games", type=int, default=0, help="also play this many solo games per card through the kit"
    )
    args = parser.parse_args(argv)
    if args.games < 2:
        parser.error("--games must be at least 2")
    if args.engine_games == 1 or args.engine_games < 0:
        parser.error("--engine-games must be 0 or at least 2")
    for card in CARDS:  # build any missing table once, before the workers load it
        load(card)
    began = time.perf_counter()
    print(f"{args.games} games per card, seed {args.seed}, {args.workers} processes")
    print(f"{'card':<20} {'mean':>10} {'95% CI':>22} {'sd':>7} {'optimum':>12} {'time':>8}")
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        for card in CARDS:
            report(measure(card, args.games, args.seed, pool))
        if args.engine_games:
            print(f"{args.engine_games} games per card played by the kit with a CPU seat")
            for card in CARDS:
                report(measure_engine(card, args.engine_games, args.seed, pool))
    print(f"total {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
