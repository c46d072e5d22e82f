"""Exact optimal play for a lone Bozó card (RULES.md "Bozó", seed 000).

What it answers
---------------
For any position of the seat to act — the card's filled boxes, the dice, the
throws used this turn, a cup waiting for its declaration — :meth:`BozoAdvisor.
advise` lists every legal action with the expected final total of the card if
it is taken and every later decision is optimal, best first. "Optimal" is for
one card on its own: solo training (10 turns, one card of 10 boxes), or a
duel or duplas card whose side simply wants the most points. It does not
play the opponent's score.

The model
---------
Bozó has no upper bonus, so between turns only the set of filled boxes
matters: the table holds, for each of the 1,024 masks, the expected points
still to come from the start of a turn. Within a turn the dice machinery of
:mod:`services.yatzy.advisor` applies (the same multisets and recursions),
with one difference: scoring at the end of a turn that used only its first
throw adds the boca bonus (+5 on Full, Seguida, Quadrada, General, never on a
zero or a number box), so the first throw's "score now" values ``F1`` differ
from those after a re-throw ``F``::

    V3 = F;  V2 = max(F, best re-throw into V3);  V1 = max(F1, best re-throw into V2)

and the turn-start value is ``E[V1]``. Points come from
:func:`services.bozo.scoring.points`, the engine's function, evaluated on the
252 throws, so advisor and engine agree by construction; their fingerprint
names the cached table. The whole table takes about 0.01 s to build (8 KiB);
it is cached like Yatzy's (``.data/advisor/``, ``RODADA_ADVISOR_DIR``) only so
that ``tools.build_advisor_tables`` treats the three games alike.

The optimum of a solo card (10 turns from an empty card) is **146.930347**
points. There is no published value to compare with; the tests check it
against an independent brute force on cards with one to three open boxes
and against simulated games of the policy.

The cup ("cantar embaixo") changes nothing for a lone player
--------------------------------------------------------------
Under the cup the player declares TOP or BOTTOM before anyone sees the
just-thrown dice, and BOTTOM turns each of them into ``7 - face``. Those dice
are independent uniform faces, independent of everything the player knows
when declaring (the kept dice, the card), and ``x -> 7 - x`` is a bijection
of {1..6}: so under either declaration the thrown dice are again independent
uniform faces, independent of the declaration, exactly as in a throw without
the cup. Every continuation is a function of the dice alone, hence **both
declarations, and throwing with or without the cup, have the same value:
that of the throw without the cup**, ``E[Vn(kept + fresh dice)]`` (a
declaration is not a throw, so the boca bonus is unaffected too). The advisor
values a pending declaration that way (``{"declare": {"side": "TOP"}}`` and
``"BOTTOM"``, equal), lists throws with ``"cup": false`` (``with_cup=True``
lists the equal ``"cup": true`` twins as well), and the simulations throw
without it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from services.bozo import scoring
from services.kit.engine import Rng
from services.yatzy.advisor import (
    DICE,
    DICE_SPACE,
    JSON,
    MAX_THROWS,
    TABLE_VERSION,
    Advice,
    FloatArray,
    IntArray,
    TurnValues,
    Workspace,
    check_dice,
    choose,
    fingerprint,
    keep_options,
    load_or_build,
    rank_options,
    turn_values,
)

SIDES = ("TOP", "BOTTOM")

# A filled box as callers hold it: its points, or the engine's card entry
# ``{"points": …, "boca": …, "seat": …}``.
Filled = Mapping[str, int] | Mapping[str, Mapping[str, Any]]


class BozoModel:
    """The card's rules as arrays: each box's points on each roll, with and
    without the boca bonus. ``uppers`` arguments exist only so that Bozó and
    Yatzy models share one interface (Bozó has no upper subtotal)."""

    def __init__(self) -> None:
        self.boxes = scoring.BOXES
        self.n = len(self.boxes)
        self.bit = {box: 1 << i for i, box in enumerate(self.boxes)}
        self.full = (1 << self.n) - 1
        rolls = DICE_SPACE.rolls
        self.points_first = np.array(
            [[scoring.points(box, roll, first_throw=True)[0] for roll in rolls] for box in self.boxes],
            dtype=np.float64,
        )
        self.points_later = np.array(
            [[scoring.points(box, roll, first_throw=False)[0] for roll in rolls] for box in self.boxes],
            dtype=np.float64,
        )
        digest = fingerprint(TABLE_VERSION, "bozo", self.boxes, self.points_first, self.points_later)
        self.name = f"bozo-{digest}.npy"
        self.shape = (1 << self.n,)

    def points(self, first_throw: bool) -> FloatArray:
        return self.points_first if first_throw else self.points_later

    def score_stage(
        self, table: FloatArray, masks: IntArray, first_throw: bool, out: FloatArray, cand: FloatArray
    ) -> FloatArray:
        """Per roll and state: the best open box's points plus the table value after."""
        out.fill(-np.inf)
        points = self.points(first_throw)
        for box in range(self.n):
            open_ = (masks >> box) & 1 == 0
            if open_.any():
                nxt = table[masks | (1 << box)]
                nxt[~open_] = -np.inf
                np.add(points[box][:, None], nxt[None, :], out=cand)
                np.maximum(out, cand, out=out)
        return out

    def turn(
        self, table: FloatArray, masks: IntArray, uppers: IntArray | None = None, ws: Workspace | None = None
    ) -> TurnValues:
        """The turn of each state (column); in ``ws``'s buffers if given."""
        if ws is None:
            ws = Workspace(len(masks))
        first = self.score_stage(table, masks, True, ws.scored_first, ws.cand)
        later = self.score_stage(table, masks, False, ws.scored, ws.cand)
        return turn_values(first, later, ws)

    def box_choices(
        self, table: FloatArray, masks: IntArray, uppers: IntArray, rolls: IntArray, first_throw: bool = False
    ) -> tuple[FloatArray, FloatArray]:
        """Per position (row) and box (column), for the roll ``rolls[i]``: the
        value of scoring the box now (the same sums as :meth:`score_stage`)
        and the points it adds; -inf for a filled box."""
        points = self.points(first_throw)
        values = np.empty((len(masks), self.n))
        gains = np.empty((len(masks), self.n))
        for box in range(self.n):
            gains[:, box] = points[box, rolls]
            values[:, box] = gains[:, box] + table[masks | (1 << box)]
            values[(masks >> box) & 1 == 1, box] = -np.inf
        return values, gains

    def after(
        self, masks: IntArray, uppers: IntArray, boxes: IntArray, rolls: IntArray
    ) -> tuple[IntArray, IntArray]:
        return masks | (1 << boxes), uppers

    def value(self, table: FloatArray, masks: IntArray, uppers: IntArray) -> FloatArray:
        """Turn-start values of the states (the table's cells)."""
        return np.asarray(table[masks], dtype=np.float64)

    def build(self) -> FloatArray:
        """The turn-start table, level by level from the full card backwards
        (every level is one vector of at most 252 masks)."""
        table = np.full(self.shape, np.nan)
        table[self.full] = 0.0
        masks = np.arange(1 << self.n, dtype=np.intp)
        filled = sum((masks >> i) & 1 for i in range(self.n))
        for level in range(self.n - 1, -1, -1):
            at_level = masks[filled == level]
            table[at_level] = self.turn(table, at_level).start()
        return table


class BozoAdvisor:
    """Optimal play for one Bozó card, from its turn-start table."""

    def __init__(self, table: FloatArray | None = None, directory: Path | None = None) -> None:
        self.model = BozoModel()
        self.table = (
            table
            if table is not None
            else load_or_build(self.model.name, self.model.shape, self.model.build, directory)
        )
        self._turn: Callable[[int], TurnValues] = functools.lru_cache(maxsize=1024)(self._compute_turn)

    def _compute_turn(self, mask: int) -> TurnValues:
        return self.model.turn(self.table, np.array([mask]))

    def state(self, filled: Filled) -> tuple[int, int]:
        """(mask of the filled boxes, points on the card)."""
        mask = 0
        total = 0
        for box, entry in filled.items():
            if box not in self.model.bit:
                raise ValueError(f"{box} is not a Bozó box")
            mask |= self.model.bit[box]
            total += int(entry["points"]) if isinstance(entry, Mapping) else int(entry)
        return mask, total

    def future(self, filled: Filled) -> float:
        """Expected points still to come, from the start of a turn."""
        return float(self.table[self.state(filled)[0]])

    def expected_total(self, filled: Filled) -> float:
        """Expected final total of the card from the start of a turn under
        optimal play: the points on the card plus the expected points to come."""
        mask, total = self.state(filled)
        return total + float(self.table[mask])

    def advise(
        self,
        filled: Filled,
        dice: Sequence[int],
        throws_used: int,
        *,
        cup_pending: bool = False,
        with_cup: bool = False,
    ) -> Advice:
        """Every legal action for the seat to act, with its expected final total.

        ``filled``: the card (box → points, or the engine's entries);
        ``dice``: the five dice, ignored before the first throw; with
        ``cup_pending`` the dice still under the cup are given as 0, as the
        view shows them; ``throws_used``: throws made this turn (0..3).
        ``with_cup`` also lists each throw with ``"cup": true`` (same value).
        """
        mask, total = self.state(filled)
        if mask == self.model.full:
            raise ValueError("the card is full: the game is over")
        if cup_pending:
            return self._declarations(mask, total, dice, throws_used)
        check_dice(dice, throws_used)
        if throws_used == 0:
            return rank_options(total, self._throws([], float(self.table[mask]), with_cup))
        roll = DICE_SPACE.roll_row(dice)
        values, _ = self.model.box_choices(
            self.table, np.array([mask]), np.array([0]), np.array([roll]), first_throw=throws_used == 1
        )
        scored: list[tuple[JSON, float]] = [
            ({"score": {"box": box}}, float(values[0, i]))
            for i, box in enumerate(self.model.boxes)
            if not mask >> i & 1
        ]
        if throws_used < MAX_THROWS:
            keeps = self._turn(mask).before_throw(throws_used)
            for keep, row in keep_options(dice, roll):
                scored += self._throws(keep, float(keeps[row, 0]), with_cup)
        return rank_options(total, scored)

    def best_action(
        self, filled: Filled, dice: Sequence[int], throws_used: int, *, cup_pending: bool = False
    ) -> JSON:
        """The policy: the best action's JSON, for a CPU seat (never the cup:
        it is worth exactly the same, see the module docstring)."""
        return self.advise(filled, dice, throws_used, cup_pending=cup_pending).best.action

    @staticmethod
    def _throws(keep: list[int], future: float, with_cup: bool) -> list[tuple[JSON, float]]:
        cups = (False, True) if with_cup else (False,)
        return [({"throw": {"keep": list(keep), "cup": cup}}, future) for cup in cups]

    def _declarations(self, mask: int, total: int, dice: Sequence[int], throws_used: int) -> Advice:
        """TOP and BOTTOM: both worth the throw's value without the cup,
        ``E[V(throws_used)(kept + fresh dice)]``."""
        hidden = [i for i, die in enumerate(dice) if die == 0]
        kept = [die for die in dice if die != 0]
        if not 1 <= throws_used <= MAX_THROWS or len(dice) != DICE or not hidden:
            raise ValueError("a pending cup follows a throw and hides at least one die (given as 0)")
        if any(not 1 <= die <= 6 for die in kept):
            raise ValueError("dice are faces 1..6, or 0 under the cup")
        if throws_used == 1 and kept:
            raise ValueError("the first throw of a turn throws all five dice")
        if throws_used == 1:
            future = float(self.table[mask])
        else:
            row = DICE_SPACE.index[tuple(sorted(kept))]
            future = float(self._turn(mask).before_throw(throws_used - 1)[row, 0])
        return rank_options(total, [({"declare": {"side": side}}, future) for side in SIDES])


@functools.cache
def advisor() -> BozoAdvisor:
    """The process's advisor (its table loaded or built once)."""
    return BozoAdvisor()


def expected_total(filled: Filled) -> float:
    """Expected final total from the start of a turn with ``filled``, optimal play."""
    return advisor().expected_total(filled)


def advise(
    filled: Filled,
    dice: Sequence[int],
    throws_used: int,
    *,
    cup_pending: bool = False,
    with_cup: bool = False,
) -> Advice:
    """Every legal action now with its expected final total (see :meth:`BozoAdvisor.advise`)."""
    return advisor().advise(filled, dice, throws_used, cup_pending=cup_pending, with_cup=with_cup)


def best_action(filled: Filled, dice: Sequence[int], throws_used: int, *, cup_pending: bool = False) -> JSON:
    """The optimal action for a CPU seat, in the engine's JSON form."""
    return advisor().best_action(filled, dice, throws_used, cup_pending=cup_pending)


def cpu_move(view: Mapping[str, Any], seat: int, rng: Rng | None = None) -> JSON:
    """The optimal action from the seat's view alone, in the shape of the kit's
    ``Game.cpu`` hook: the card of the seat's side (``seat % cards``: its
    own in solo and duel, its team's in duplas), the dice (0 under the cup),
    the throws made and whether a cup waits for its declaration. It never
    throws with the cup (worth exactly the same, see the module docstring);
    ties, such as TOP and BOTTOM for a pending cup, are broken by ``rng``
    (:func:`services.yatzy.advisor.choose`). Fields at their default may be
    absent from a view, hence the ``get``s."""
    cards = view["cards"]
    entries = cards[seat % len(cards)].get("boxes", [])
    filled = {e["box"]: int(e.get("points", 0)) for e in entries}
    dice = [int(die.get("face", 0)) for die in view.get("dice", [])]
    throws = int(view.get("throw_number", 0))
    return choose(advisor().advise(filled, dice, throws, cup_pending=bool(view.get("cup_pending"))), rng)


def prepare() -> None:
    """Load (or build and cache) the table before a service serves."""
    advisor()
