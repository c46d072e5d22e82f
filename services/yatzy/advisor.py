"""Exact optimal play for a lone Yatzy player, on both cards (RULES.md "Yatzy").

What it answers
---------------
For any position of a seat to act — the boxes already filled with their
points, the dice, the throws used this turn — :meth:`YatzyAdvisor.advise`
gives every legal action with the expected final total of the card if that
action is taken and every later decision is optimal, best first. The policy
maximises the expected final total of one card (solitaire Yatzy); in a match
against others it is a strong, not a game-theoretically optimal, player.

The model
---------
Between turns only three things matter for the future: which boxes are
filled, and the upper subtotal, capped at 63 because beyond 63 the bonus is
earned and more upper points change nothing. So the state is (filled-box
mask, capped upper subtotal) and the table holds, for each state, the
expected points still to come from the start of a turn under optimal play,
the bonus counted at the moment the subtotal reaches 63. The expected final
total of a card is then ``scoring.total(card, filled) + table[mask, u]``.

Inside a turn the dice are a multiset (252 possible throws of five dice, 462
multisets of 0..5 kept dice). Working backwards:

* ``F(r)``: after a throw showing ``r``, score the best open box: the box's
  points, the bonus if this crosses 63, plus the table value of the next
  state;
* ``V3 = F``; ``Vn(r) = max(F(r), max over kept sub-multisets m of r with at
  most four dice of E[V(n+1)(m + fresh dice)])`` for the second and first
  throw (a re-throw throws at least one die; keeping all five and stopping
  is the same as scoring now, which ``F`` already offers);
* the turn-start value is ``E[V1]`` over the first throw of five dice.

Expectations are computed one die at a time (``E[m] = mean over the six
faces f of E[m + f]``) and "best sub-multiset" by the recursion ``B[m] =
max(E[m], max over one die d of m of B[m - d])``, so a turn costs a few
thousand vector operations instead of a dense 462x252 product. The states
of a level (same number of filled boxes) are the columns of one array,
processed in chunks of 1,024: a few hundred numpy calls per chunk. (Profiled
first: gathers into preallocated buffers instead of fresh temporaries, and
multisets ordered so that the recursion works on slices, made it 2.5 times
faster than the first version.)

States that cannot matter are not computed. Only upper subtotals that the
filled upper boxes can make are reachable (three filled Ones cannot hold
37), and a subtotal that can no longer reach 63 (or has reached it) has no
bonus stake left: its value is that of the capped state 63, copied to its
cells. That leaves 239,744 states to compute classic and 958,976
Scandinavian instead of 524,288 and 2,097,152. Unreachable cells stay NaN:
a reachable state only leads to reachable states, and :meth:`YatzyAdvisor.
state` refuses upper points that no dice could have made.

Scores come from :mod:`services.yatzy.scoring` (``scoring.score``), the
engine's own functions, evaluated once on the 252 throws: the advisor and
the engine cannot disagree on what a box is worth. The fingerprint of those
scores is part of the cached table's file name, so a change of a scoring
rule builds a new table instead of reading a stale one.

The optimum from an empty card, and the literature
---------------------------------------------------
* Classic: **245.870775**. Verhoeff's solitaire Yahtzee analysis gives
  254.5896 with the extra Yahtzee bonus and the joker and 245.87 without
  them (this card's rules); an independent open-source solver pins
  245.8707745141 for that game.
* Scandinavian: **248.439989**. Larsson & Sjöberg (KTH 2012) publish 248.63,
  but their released code scores Two pairs as the highest pair plus the
  second one *or nothing* (a single pair scores in Two pairs); with only that
  box changed this solver gives 248.632854, i.e. their number. Under their
  stated rules (two different pairs) the value is 248.4399894, which two
  other independent solvers also report. ``tests/unit/test_advisors.py``
  checks all three figures.

Build or ship?
--------------
Measured on the 2-core development machine (numpy 2.4, one core, the machine
shared with other work): classic builds in 1.1-1.3 s into a 4.0 MiB table,
Scandinavian in 4.1-6.0 s into 16.0 MiB, Bozó in 0.01 s (float64 ``.npy``
with NaN in unreachable cells; ``savez_compressed`` would only bring them
to 1.6 and 6.3 MiB, float64 mantissas hardly compress). Under heavy load
(load average 14 on the 2 cores) the same builds took 26-45 s and 72-244 s;
the bytes were the same every time (``tools.build_advisor_tables`` prints
their SHA-256). Peak memory of a build is about 80 MiB; loading a cached
table takes about 15 ms; ``advise`` then takes about 1 ms for a new state
and 0.15 ms within a turn.

So the tables are **built, never committed**: shipping them in git would put
20 MiB of binary (7.9 MiB compressed) in every clone and in its history at
every rule change, to save seconds once per checkout. They are built on first
use and cached in ``.data/advisor/`` (``RODADA_ADVISOR_DIR`` overrides it),
written atomically (a temporary file then ``os.replace``) so concurrent
processes never read half a table; ``make advisor-cache`` (run by ``make
run`` and ``make test``) builds a missing one, ``make advisor-tables``
rebuilds them all. A game service loads them (:func:`prepare`) before its
port opens, so no request ever waits for a table. The container image builds
them in at image build time (``deploy/docker/Dockerfile``): pods run with a
read-only root filesystem, where a table built on first use could not be
cached and every pod start would pay the build (up to minutes under load)
before it serves.

The dice-turn machinery (:class:`DiceSpace`, :func:`keep_values`,
:func:`reroll_values`, :func:`turn_values`) and the table cache
(:func:`load_or_build`) do not know Yatzy; ``services.bozo.advisor`` uses
them too.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import logging
import math
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from services.kit.engine import Rng
from services.yatzy import scoring

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
JSON = dict[str, Any]

_log = logging.getLogger(__name__)

DICE = 5
FACES = 6
MAX_THROWS = 3
# The capped upper subtotal: 0..63, where 63 means "no bonus stake left".
UPPER_CAP = scoring.BONUS_THRESHOLD
UPPER_STATES = UPPER_CAP + 1
# States per vectorised chunk: big enough that numpy's per-call overhead
# vanishes, small enough that a chunk's arrays (462 rows) stay in L2/L3 cache.
CHUNK = 1024
# Bump when the meaning or layout of a table changes: it is in the cache name.
TABLE_VERSION = 1


# --- Dice multisets ------------------------------------------------------------


class DiceSpace:
    """Every multiset of 0..5 dice, indexed, with the moves between them.

    Multisets are sorted tuples of faces, ordered by size, then by how many
    distinct faces they show, then lexicographically. Size first puts the 252
    five-dice throws ("rolls") in the last rows (``roll_start:``); distinct
    faces second makes the multisets with the same number of one-die-smaller
    sub-multisets contiguous, so :func:`reroll_values` works on slices.
    """

    def __init__(self) -> None:
        self.multisets: list[tuple[int, ...]] = sorted(
            (
                combo
                for size in range(DICE + 1)
                for combo in itertools.combinations_with_replacement(range(1, FACES + 1), size)
            ),
            key=lambda m: (len(m), len(set(m)), m),
        )
        self.index: dict[tuple[int, ...], int] = {m: i for i, m in enumerate(self.multisets)}
        bounds = [0]
        for size in range(DICE + 1):
            bounds.append(bounds[-1] + math.comb(FACES + size - 1, size))
        # Rows of the multisets of each size.
        self.sizes: list[slice] = [slice(bounds[k], bounds[k + 1]) for k in range(DICE + 1)]
        self.roll_start = bounds[DICE]
        self.count = bounds[-1]
        self.rolls: list[tuple[int, ...]] = self.multisets[self.roll_start :]

        # child[m, f - 1]: the multiset m plus one die showing f (for |m| < 5).
        child = np.zeros((self.roll_start, FACES), dtype=np.intp)
        for i, m in enumerate(self.multisets[: self.roll_start]):
            for f in range(1, FACES + 1):
                child[i, f - 1] = self.index[tuple(sorted((*m, f)))]
        self.child = child

        # groups[size]: (rows, parents) for each run of multisets of that size
        # with d distinct faces; parents[i, j] is the row of the i-th multiset
        # minus one die of its j-th distinct face.
        self.groups: list[list[tuple[slice, IntArray]]] = [[] for _ in range(DICE + 1)]
        for size in range(1, DICE + 1):
            rows = range(bounds[size], bounds[size + 1])
            for distinct, run in itertools.groupby(rows, key=lambda i: len(set(self.multisets[i]))):
                run_rows = list(run)
                subs = [
                    [self.index[_without(self.multisets[i], face)] for face in sorted(set(self.multisets[i]))]
                    for i in run_rows
                ]
                parents = np.array(subs, dtype=np.intp).reshape(len(run_rows), distinct)
                self.groups[size].append((slice(run_rows[0], run_rows[-1] + 1), parents))

        # P(throwing exactly this multiset) with as many fresh dice as it has.
        self.prob = np.array([_multiset_probability(m) for m in self.multisets], dtype=np.float64)
        self.roll_prob = self.prob[self.roll_start :].copy()

        # face_count[f - 1, r]: how many dice of roll r show f.
        self.face_count = np.array(
            [[roll.count(f) for roll in self.rolls] for f in range(1, FACES + 1)], dtype=np.intp
        )
        # Base-6 code of a roll's count vector -> roll row; simulations use it.
        self.roll_of_code = np.full(FACES**FACES, -1, dtype=np.intp)
        for r, roll in enumerate(self.rolls):
            self.roll_of_code[counts_code([roll.count(f) for f in range(1, FACES + 1)])] = r

        # For each roll, its kept sub-multisets as the engine's keep lists:
        # index subsets (into the sorted roll) of at most four dice (a
        # re-throw throws at least one), one representative per distinct
        # multiset (the first in (size, lexicographic) order), and its row.
        self.keeps: list[list[tuple[tuple[int, ...], int]]] = []
        for roll in self.rolls:
            seen: dict[int, tuple[int, ...]] = {}
            for size in range(DICE):
                for idx in itertools.combinations(range(DICE), size):
                    seen.setdefault(self.index[tuple(roll[i] for i in idx)], idx)
            self.keeps.append([(idx, row) for row, idx in seen.items()])
        # The same as a padded array (the first repeated), for vectorised
        # choices in simulations: argmax over a row picks the first best keep.
        self.max_keeps = max(len(k) for k in self.keeps)
        keep_rows = np.zeros((len(self.rolls), self.max_keeps), dtype=np.intp)
        for r, keeps in enumerate(self.keeps):
            keep_rows[r] = [row for _, row in keeps] + [keeps[0][1]] * (self.max_keeps - len(keeps))
        self.keep_rows = keep_rows

    def roll_row(self, dice: Sequence[int]) -> int:
        """Row (0..251) of five dice among the rolls."""
        return self.index[tuple(sorted(dice))] - self.roll_start


def _without(m: tuple[int, ...], face: int) -> tuple[int, ...]:
    i = m.index(face)
    return m[:i] + m[i + 1 :]


def counts_code(counts: Sequence[int]) -> int:
    """A count vector (how many 1s, 2s, … 6s) as one base-6 number."""
    code = 0
    for c in reversed(counts):
        code = code * FACES + c
    return code


def _multiset_probability(m: tuple[int, ...]) -> float:
    ways = math.factorial(len(m))
    for face in set(m):
        ways //= math.factorial(m.count(face))
    return float(ways / FACES ** len(m))


DICE_SPACE = DiceSpace()


# --- One turn, for many states at once ----------------------------------------
# Arrays have one row per multiset (or per roll) and one column per state.
# Gathers use np.take(..., mode="clip") into preallocated buffers: "raise"
# buffers the output, and fresh multi-megabyte temporaries cost page faults.


class Workspace:
    """Reusable arrays for turns of ``columns`` states. A :class:`TurnValues`
    built in a workspace is overwritten by the next turn built in it."""

    def __init__(self, columns: int) -> None:
        ds = DICE_SPACE
        rolls = len(ds.rolls)
        self.columns = columns
        self.scored = np.empty((rolls, columns))
        self.scored_first = np.empty((rolls, columns))
        self.cand = np.empty((rolls, columns))
        self.keep1 = np.empty((ds.count, columns))
        self.keep2 = np.empty((ds.count, columns))
        self.v1 = np.empty((rolls, columns))
        self.v2 = np.empty((rolls, columns))
        self.best = np.empty((ds.roll_start, columns))
        self.scratch = np.empty((rolls, columns))

    def view(self, columns: int) -> Workspace:
        """The same buffers for fewer columns (a chunk's tail)."""
        if columns == self.columns:
            return self
        part = object.__new__(Workspace)
        part.columns = columns
        for name in ("scored", "scored_first", "cand", "keep1", "keep2", "v1", "v2", "best", "scratch"):
            full: FloatArray = getattr(self, name)
            setattr(part, name, full.reshape(-1)[: full.shape[0] * columns].reshape(-1, columns))
        return part


def keep_values(
    v: FloatArray, out: FloatArray | None = None, scratch: FloatArray | None = None
) -> FloatArray:
    """``E[m]`` for every multiset ``m`` (462 rows): the expected value of ``v``
    (one row per roll) after throwing ``5 - |m|`` fresh dice next to ``m``,
    one die at a time: ``E[m] = mean over faces f of E[m + f]``."""
    ds = DICE_SPACE
    columns = v.shape[1]
    e = np.empty((ds.count, columns)) if out is None else out
    tmp = np.empty((len(ds.rolls), columns)) if scratch is None else scratch
    e[ds.roll_start :] = v
    for size in range(DICE - 1, -1, -1):
        rows = ds.sizes[size]
        child = ds.child[rows]
        acc = e[rows]
        buf = tmp[: len(child)]
        np.take(e, child[:, 0], axis=0, out=acc, mode="clip")
        for f in range(1, FACES):
            np.take(e, child[:, f], axis=0, out=buf, mode="clip")
            acc += buf
        acc /= FACES
    return e


def reroll_values(
    e: FloatArray,
    out: FloatArray | None = None,
    best: FloatArray | None = None,
    scratch: FloatArray | None = None,
) -> FloatArray:
    """For each roll (252 rows), the best ``e`` over the multisets it may keep
    for a re-throw, its sub-multisets of at most four dice, by the recursion
    ``B[m] = max(E[m], max over one die d of m of B[m - d])``."""
    ds = DICE_SPACE
    columns = e.shape[1]
    rolls = len(ds.rolls)
    res = np.empty((rolls, columns)) if out is None else out
    b = np.empty((ds.roll_start, columns)) if best is None else best
    tmp = np.empty((rolls, columns)) if scratch is None else scratch
    b[0] = e[0]
    for size in range(1, DICE + 1):
        for rows, parents in ds.groups[size]:
            if size < DICE:
                acc = b[rows]
                np.take(b, parents[:, 0], axis=0, out=acc, mode="clip")
                np.maximum(acc, e[rows], out=acc)
            else:  # a roll may not keep all five dice
                acc = res[rows.start - ds.roll_start : rows.stop - ds.roll_start]
                np.take(b, parents[:, 0], axis=0, out=acc, mode="clip")
            buf = tmp[: len(parents)]
            for j in range(1, parents.shape[1]):
                np.take(b, parents[:, j], axis=0, out=buf, mode="clip")
                np.maximum(acc, buf, out=acc)
    return res


@dataclass(frozen=True)
class TurnValues:
    """One turn, per state (column): the value of the dice after each throw
    under optimal play, and of each kept multiset before each re-throw."""

    v1: FloatArray  # after the first throw, per roll
    v2: FloatArray  # after the second throw, per roll
    v3: FloatArray  # after the third throw, per roll (score now)
    keep1: FloatArray  # before the second throw, per kept multiset (462 rows)
    keep2: FloatArray  # before the third throw, per kept multiset

    def after_throw(self, throws_used: int) -> FloatArray:
        return (self.v1, self.v2, self.v3)[throws_used - 1]

    def before_throw(self, throws_used: int) -> FloatArray:
        """Kept-multiset values for the re-throw after ``throws_used`` throws."""
        return (self.keep1, self.keep2)[throws_used - 1]

    def start(self) -> FloatArray:
        """The turn-start value (per state): E[v1] over five fresh dice."""
        # A plain sum down the rows, not a BLAS product: the same bits on
        # every machine whatever its thread count.
        return np.asarray((self.v1 * DICE_SPACE.roll_prob[:, None]).sum(axis=0), dtype=np.float64)


def turn_values(first: FloatArray, later: FloatArray, ws: Workspace | None = None) -> TurnValues:
    """``first``/``later``: per roll and state, the value of scoring the best
    box after the first throw / after a re-throw (they differ in Bozó, where
    the first throw scores "de boca")."""
    if ws is None:
        ws = Workspace(first.shape[1])
    keep2 = keep_values(later, ws.keep2, ws.scratch)
    v2 = reroll_values(keep2, ws.v2, ws.best, ws.scratch)
    np.maximum(v2, later, out=v2)
    keep1 = keep_values(v2, ws.keep1, ws.scratch)
    v1 = reroll_values(keep1, ws.v1, ws.best, ws.scratch)
    np.maximum(v1, first, out=v1)
    return TurnValues(v1=v1, v2=v2, v3=later, keep1=keep1, keep2=keep2)


# --- The table cache -------------------------------------------------------------


def advisor_dir() -> Path:
    """Where tables are cached: ``RODADA_ADVISOR_DIR``, else ``.data/advisor``
    at the checkout's root (next to ``.data/redis``)."""
    env = os.environ.get("RODADA_ADVISOR_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2] / ".data" / "advisor"


def fingerprint(*parts: object) -> str:
    """A short digest of whatever a table depends on (rules, scores, version)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.tobytes() if isinstance(part, np.ndarray) else repr(part).encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def save_atomic(path: Path, table: FloatArray) -> None:
    """Write a ``.npy`` so that readers see the old file or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            np.save(out, table, allow_pickle=False)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the cache is shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_or_build(
    name: str, shape: tuple[int, ...], build: Callable[[], FloatArray], directory: Path | None = None
) -> FloatArray:
    """The cached table ``name`` (a file name carrying its fingerprint), or
    ``build()`` it and cache it. An unreadable file or one of the wrong shape
    is rebuilt; a folder that cannot be written (a read-only image) only
    costs the cache, not the table."""
    path = (directory or advisor_dir()) / name
    try:
        table = np.load(path, allow_pickle=False)
        if table.shape == shape and table.dtype == np.float64:
            return np.asarray(table, dtype=np.float64)
    except (OSError, ValueError):
        pass
    table = build()
    try:
        save_atomic(path, table)
    except OSError as exc:
        _log.warning("advisor table %s not cached: %s", path, exc)
    return table


# --- Advice ------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """A legal action (the engine's JSON form) and the expected final total of
    the card if it is taken and every later decision is optimal."""

    action: JSON
    expected_final_score: float


@dataclass(frozen=True)
class Advice:
    """Every legal action now, best first (ties: scoring before re-throwing,
    boxes in card order, fewer kept dice first)."""

    expected_final_score: float
    options: tuple[Option, ...]

    @property
    def best(self) -> Option:
        return self.options[0]


def rank_options(total: int, scored: list[tuple[JSON, float]]) -> Advice:
    """Sort ``(action, expected points still to come)`` best first, stably so
    that ties keep the listed order, then add the points already on the card."""
    ordered = sorted(scored, key=lambda item: -item[1])
    options = tuple(Option(action, total + future) for action, future in ordered)
    return Advice(expected_final_score=options[0].expected_final_score, options=options)


# Options whose expectations differ by less than this are equally good: one
# value summed in another order differs in its last bits (a value is at most a
# few hundred points, so a real difference is many orders of magnitude larger).
TIE = 1e-9


def choose(advice: Advice, rng: Rng | None) -> JSON:
    """A CPU's pick: the best option, and among equally good ones (keeping any
    one die of 1-2-3-4-5 for a last Yatzy box, say) one drawn from ``rng``,
    the CPU's own generator stream. It draws only on a tie, so the choice is a
    function of the position and the generator's state; without a generator
    the first best is taken."""
    best = advice.best.expected_final_score
    tied = [o for o in advice.options if best - o.expected_final_score <= TIE]
    if len(tied) == 1 or rng is None:
        return tied[0].action
    return tied[rng.randbelow(len(tied))].action


def check_dice(dice: Sequence[int], throws_used: int) -> None:
    if not 0 <= throws_used <= MAX_THROWS:
        raise ValueError("throws_used is 0..3")
    if throws_used and (len(dice) != DICE or any(not 1 <= d <= FACES for d in dice)):
        raise ValueError("after a throw, dice are five faces 1..6")


# --- Yatzy ---------------------------------------------------------------------------


class YatzyModel:
    """One card's rules as arrays: what each box scores on each roll, which
    boxes are upper, and the reachable upper subtotals."""

    def __init__(self, card: str, score: Callable[[str, str, Sequence[int]], int] = scoring.score) -> None:
        """``score`` is the engine's scoring; another one (tests, rule variants)
        gets its own cache file, as the fingerprint covers every box's points."""
        self.card = card
        self.boxes = scoring.boxes(card)
        self.n = len(self.boxes)
        self.bit = {box: 1 << i for i, box in enumerate(self.boxes)}
        self.full = (1 << self.n) - 1
        self.bonus = scoring.UPPER_BONUS[card]
        self.points = np.array(
            [[score(card, box, roll) for roll in DICE_SPACE.rolls] for box in self.boxes],
            dtype=np.float64,
        )
        # Face of each upper box (0 for the others), and the bits of the upper boxes.
        self.face = [scoring.UPPER_FACES.get(box, 0) for box in self.boxes]
        self.upper_bits = [i for i, face in enumerate(self.face) if face]
        # Per upper mask (Ones = bit 0): the capped subtotals those boxes can
        # make that still have a bonus stake ("alive": below 63 and able to
        # reach it), and those that cannot ("dead": never able to reach 63).
        self.alive: dict[int, list[int]] = {}
        self.dead: dict[int, list[int]] = {}
        for upper in range(1 << len(self.upper_bits)):
            reachable = {0}
            left = 0
            for j, i in enumerate(self.upper_bits):
                face = self.face[i]
                if upper >> j & 1:
                    reachable = {min(UPPER_CAP, u + face * k) for u in reachable for k in range(DICE + 1)}
                else:
                    left += face * DICE
            self.alive[upper] = sorted(u for u in reachable if u < UPPER_CAP and u + left >= UPPER_CAP)
            self.dead[upper] = sorted(u for u in reachable if u + left < UPPER_CAP)
        digest = fingerprint(TABLE_VERSION, card, self.boxes, self.bonus, UPPER_CAP, self.points)
        self.name = f"yatzy-{card.lower()}-{digest}.npy"
        self.shape = (1 << self.n, UPPER_STATES)

    def upper_key(self, mask: int) -> int:
        """The upper boxes of ``mask`` as a 6-bit number (Ones = bit 0)."""
        return sum(1 << j for j, i in enumerate(self.upper_bits) if mask >> i & 1)

    def score_stage(
        self,
        table: FloatArray,
        masks: IntArray,
        uppers: IntArray,
        out: FloatArray | None = None,
        cand: FloatArray | None = None,
    ) -> FloatArray:
        """``F``: per roll and state, the best open box's points (with the
        bonus if it crosses 63) plus the next state's table value."""
        best = np.empty((len(DICE_SPACE.rolls), len(masks))) if out is None else out
        best.fill(-np.inf)
        for box in range(self.n):
            for_box = self.box_values(table, masks, uppers, box, cand)
            if for_box is not None:
                np.maximum(best, for_box, out=best)
        return best

    def box_values(
        self, table: FloatArray, masks: IntArray, uppers: IntArray, box: int, out: FloatArray | None = None
    ) -> FloatArray | None:
        """Per roll and state, scoring ``box`` now: its points, the bonus if
        this crosses 63, plus the table value after; -inf where the box is
        filled, None if it is filled in every state."""
        open_ = (masks >> box) & 1 == 0
        if not open_.any():
            return None
        res = np.empty((len(DICE_SPACE.rolls), len(masks))) if out is None else out
        after = masks | (1 << box)
        face = self.face[box]
        points = self.points[box][:, None]
        if not face:
            nxt = table[after, uppers]
            nxt[~open_] = -np.inf
            np.add(points, nxt[None, :], out=res)
            return res
        # Upper box: the subtotal moves by face * count, 0..5 dice of the face.
        by_count = np.empty((DICE + 1, len(masks)))
        for count in range(DICE + 1):
            raw = uppers + face * count
            crosses = (uppers < UPPER_CAP) & (raw >= UPPER_CAP)
            by_count[count] = table[after, np.minimum(raw, UPPER_CAP)] + self.bonus * crosses
        by_count[:, ~open_] = -np.inf
        np.take(by_count, DICE_SPACE.face_count[face - 1], axis=0, out=res, mode="clip")
        res += points
        return res

    def box_choices(
        self, table: FloatArray, masks: IntArray, uppers: IntArray, rolls: IntArray, first_throw: bool = False
    ) -> tuple[FloatArray, FloatArray]:
        """Per position (row) and box (column), for the roll ``rolls[i]``:
        the value of scoring the box now (as :meth:`box_values`, bit for bit:
        the same sums in the same order) and the points it adds to the card,
        bonus included. The advice and the simulations both choose with it.
        (``first_throw`` matters only in Bozó, for the boca bonus.)"""
        values = np.empty((len(masks), self.n))
        gains = np.empty((len(masks), self.n))
        for box in range(self.n):
            points = self.points[box, rolls]
            after = masks | (1 << box)
            face = self.face[box]
            if face:
                raw = uppers + points.astype(np.intp)
                crosses = (uppers < UPPER_CAP) & (raw >= UPPER_CAP)
                nxt = table[after, np.minimum(raw, UPPER_CAP)] + self.bonus * crosses
                gains[:, box] = points + self.bonus * crosses
            else:
                nxt = table[after, uppers]
                gains[:, box] = points
            values[:, box] = points + nxt
            values[(masks >> box) & 1 == 1, box] = -np.inf
        return values, gains

    def after(
        self, masks: IntArray, uppers: IntArray, boxes: IntArray, rolls: IntArray
    ) -> tuple[IntArray, IntArray]:
        """The next states once each position scored ``boxes[i]`` with ``rolls[i]``."""
        faces = np.array(self.face, dtype=np.intp)[boxes]
        counts = DICE_SPACE.face_count[np.maximum(faces, 1) - 1, rolls]
        return masks | (1 << boxes), np.minimum(uppers + faces * counts, UPPER_CAP)

    def value(self, table: FloatArray, masks: IntArray, uppers: IntArray) -> FloatArray:
        """Turn-start values of the states (the table's cells)."""
        return np.asarray(table[masks, uppers], dtype=np.float64)

    def turn(
        self, table: FloatArray, masks: IntArray, uppers: IntArray, ws: Workspace | None = None
    ) -> TurnValues:
        """The turn of each state (column); in ``ws``'s buffers if given."""
        if ws is None:
            ws = Workspace(len(masks))
        scored = self.score_stage(table, masks, uppers, ws.scored, ws.cand)
        return turn_values(scored, scored, ws)

    def level_states(self, level: int) -> tuple[IntArray, IntArray]:
        """(masks, capped subtotals) of the states computed with ``level``
        boxes filled: each mask with its alive subtotals and 63."""
        masks_parts: list[IntArray] = []
        uppers_parts: list[IntArray] = []
        for key, group in self._level_groups(level):
            us = np.array([*self.alive[key], UPPER_CAP], dtype=np.intp)
            masks_parts.append(np.repeat(group, len(us)))
            uppers_parts.append(np.tile(us, len(group)))
        return np.concatenate(masks_parts), np.concatenate(uppers_parts)

    def _level_groups(self, level: int) -> list[tuple[int, IntArray]]:
        """The masks with ``level`` boxes filled, grouped by their upper boxes."""
        masks = np.arange(1 << self.n, dtype=np.intp)
        popcount = np.zeros(len(masks), dtype=np.intp)
        keys = np.zeros(len(masks), dtype=np.intp)
        for i in range(self.n):
            popcount += (masks >> i) & 1
        for j, i in enumerate(self.upper_bits):
            keys |= ((masks >> i) & 1) << j
        at_level = popcount == level
        return [
            (key, masks[at_level & (keys == key)])
            for key in sorted(self.alive)
            if (at_level & (keys == key)).any()
        ]

    def build(self, chunk: int = CHUNK) -> FloatArray:
        """The turn-start table, level by level from the full card backwards."""
        table = np.full(self.shape, np.nan)
        table[self.full, :] = 0.0
        ws = Workspace(chunk)
        for level in range(self.n - 1, -1, -1):
            masks, uppers = self.level_states(level)
            for start in range(0, len(masks), chunk):
                m, u = masks[start : start + chunk], uppers[start : start + chunk]
                table[m, u] = self.turn(table, m, u, ws.view(len(m))).start()
            self.fill_dead(table, level)
        return table

    def fill_dead(self, table: FloatArray, level: int) -> None:
        """Subtotals with no bonus stake left are worth the capped state's value."""
        for key, group in self._level_groups(level):
            dead = np.array(self.dead[key], dtype=np.intp)
            table[np.ix_(group, dead)] = table[group, UPPER_CAP][:, None]


class YatzyAdvisor:
    """Optimal solitaire play on one card, from its turn-start table."""

    def __init__(self, card: str, table: FloatArray | None = None, directory: Path | None = None) -> None:
        self.model = YatzyModel(card)
        self.card = card
        self.table = (
            table
            if table is not None
            else load_or_build(self.model.name, self.model.shape, self.model.build, directory)
        )
        # The turn of a recently advised state: a seat asks up to four times a turn.
        self._turn: Callable[[int, int], TurnValues] = functools.lru_cache(maxsize=256)(self._compute_turn)

    def _compute_turn(self, mask: int, upper: int) -> TurnValues:
        return self.model.turn(self.table, np.array([mask]), np.array([upper]))

    # --- Positions -------------------------------------------------------------

    def state(self, filled: Mapping[str, int]) -> tuple[int, int]:
        """(mask, capped upper subtotal) of a card, checked: boxes on the card,
        upper points that dice could score (face × 0..5)."""
        mask = 0
        for box, points in filled.items():
            if box not in self.model.bit:
                raise ValueError(f"{box} is not on the {self.card} card")
            face = scoring.UPPER_FACES.get(box)
            if face is not None and (points % face or not 0 <= points <= DICE * face):
                raise ValueError(f"{box} cannot hold {points} points")
            mask |= self.model.bit[box]
        return mask, min(UPPER_CAP, scoring.upper_subtotal(filled))

    def future(self, filled: Mapping[str, int]) -> float:
        """Expected points still to come (boxes and bonus) from a turn start."""
        mask, upper = self.state(filled)
        return float(self.table[mask, upper])

    def expected_total(self, filled: Mapping[str, int]) -> float:
        """Expected final total of the card from the start of a turn, under
        optimal play: the points already scored (bonus included) plus the
        expected points to come."""
        return scoring.total(self.card, filled) + self.future(filled)

    def advise(self, filled: Mapping[str, int], dice: Sequence[int], throws_used: int) -> Advice:
        """Every legal action for the seat to act, with its expected final total.

        ``filled`` is the seat's card as the engine stores it (box → points),
        ``dice`` the five dice (ignored before the first throw) and
        ``throws_used`` the throws made this turn (0..3).
        """
        check_dice(dice, throws_used)
        mask, upper = self.state(filled)
        if mask == self.model.full:
            raise ValueError("the card is full: the game is over")
        total = scoring.total(self.card, filled)
        if throws_used == 0:
            return rank_options(total, [({"roll": {}}, float(self.table[mask, upper]))])
        roll = DICE_SPACE.roll_row(dice)
        values, _ = self.model.box_choices(self.table, np.array([mask]), np.array([upper]), np.array([roll]))
        scored: list[tuple[JSON, float]] = [
            ({"score": {"box": box}}, float(values[0, i]))
            for i, box in enumerate(self.model.boxes)
            if not mask >> i & 1
        ]
        if throws_used < MAX_THROWS:
            keeps = self._turn(mask, upper).before_throw(throws_used)
            scored += [
                ({"roll": {"keep": keep}}, float(keeps[row, 0])) for keep, row in keep_options(dice, roll)
            ]
        return rank_options(total, scored)

    def best_action(self, filled: Mapping[str, int], dice: Sequence[int], throws_used: int) -> JSON:
        """The policy: the best action's JSON, for a CPU seat."""
        return self.advise(filled, dice, throws_used).best.action


def keep_options(dice: Sequence[int], roll: int) -> list[tuple[list[int], int]]:
    """The distinct keeps of ``dice`` (roll row ``roll``) for a re-throw: for
    each kept multiset of at most four dice, the lowest die positions holding
    it and the multiset's row, in (size, lexicographic) order."""
    order = sorted(dice)
    options: list[tuple[list[int], int]] = []
    for idx, row in DICE_SPACE.keeps[roll]:
        left = [order[i] for i in idx]
        positions: list[int] = []
        for i, die in enumerate(dice):
            if die in left:
                left.remove(die)
                positions.append(i)
        options.append((positions, row))
    return options


@functools.cache
def advisor(card: str = scoring.CLASSIC) -> YatzyAdvisor:
    """The process's advisor for ``card`` (its table loaded or built once)."""
    return YatzyAdvisor(card)


def expected_total(filled: Mapping[str, int], card: str = scoring.CLASSIC) -> float:
    """Expected final total from the start of a turn with ``filled``, optimal play."""
    return advisor(card).expected_total(filled)


def advise(
    filled: Mapping[str, int], dice: Sequence[int], throws_used: int, card: str = scoring.CLASSIC
) -> Advice:
    """Every legal action now with its expected final total (see :meth:`YatzyAdvisor.advise`)."""
    return advisor(card).advise(filled, dice, throws_used)


def best_action(
    filled: Mapping[str, int], dice: Sequence[int], throws_used: int, card: str = scoring.CLASSIC
) -> JSON:
    """The optimal action for a CPU seat, in the engine's JSON form."""
    return advisor(card).best_action(filled, dice, throws_used)


def cpu_move(view: Mapping[str, Any], seat: int, rng: Rng | None = None) -> JSON:
    """The optimal action from the seat's view alone, in the shape of the kit's
    ``Game.cpu`` hook (Yatzy hides nothing, so the view is the whole position;
    ties between equally good actions are broken by ``rng``, see
    :func:`choose`). Fields at their default may be absent from a view, hence
    the ``get``s."""
    entries = view["cards"][seat].get("boxes", [])
    filled = {e["box"]: int(e.get("points", 0)) for e in entries if e.get("filled")}
    card = str(view.get("card") or scoring.CLASSIC)
    advice = advisor(card).advise(filled, list(view.get("dice", [])), int(view.get("throws_used", 0)))
    return choose(advice, rng)


def prepare() -> None:
    """Load (or build and cache) both cards' tables: a service does it once
    before it serves, so no request waits for a table."""
    for card in scoring.CARDS:
        advisor(card)
