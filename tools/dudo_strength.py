"""How well Dudo's computer player plays: seeded four-player games against
three simple bots.

    python -m tools.dudo_strength [--games 2000] [--seed 2026] [--dice 3] [--max-seconds 600] [--control]

Each game seats the CPU (``services/dudo/cpu.py``, as a CPU seat of the kit,
so the kit plays its turns from its view alone) with three bots that the
script plays through the kit as if they were people:

- a random bidder: any legal bid, Dudo or calza, uniformly;
- two "expected count" players: a bid is believable up to their own
  matching dice plus a third of the dice they cannot see (a sixth for ones,
  and for every face in a palifico round); they call Dudo on a standing bid
  above that, else make the lowest raise that stays within it (Dudo if none
  does; a one counts as two dice of another face), and open on their best
  face at the expected count.

The CPU's seat turns round the table from game to game. The figure is the
CPU's win rate (last player with dice) with its 95% Wilson interval; a
quarter is what a player no better than the others would get. With
``--control`` the CPU's seat is played by a third expected-count player
instead: the same games with no CPU, to check the harness (that seat should
then win about as often as the other two expected-count players).

Pure engines through ``services.kit.play``: no service, no network, no files.
Everything is seeded (the match's dice from a generator keyed by the seed
and the game's number, the CPU's choices from the kit's CPU stream, the
bots' from their own), so the same arguments give the same figures. The run
stops early, and says so, once ``--max-seconds`` have passed.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from services.dudo.bids import count_matching, legal_bids
from services.dudo.game import GAME
from services.dudo.odds import wild_chance
from services.kit import play
from services.kit.engine import JSON, Context
from services.kit.rng import MatchRng, cpu_seed

SEATS = 4
MAX_MOVES = 5_000  # per game; a game of three dice each ends far sooner
Bot = Callable[[play.Table, int, random.Random], JSON]


def random_bidder(table: play.Table, seat: int, rnd: random.Random) -> JSON:
    """Any legal move but switching assisted mode, uniformly."""
    assert GAME.legal is not None
    moves = [a for a in GAME.legal(table.state, seat) if "set_assist" not in a]
    return rnd.choice(moves)


def expected_count_bidder(table: play.Table, seat: int, rnd: random.Random) -> JSON:
    """Believes a bid up to its own matching dice plus the unseen dice's share."""
    view = GAME.view(table.state, seat)
    own: list[int] = view["my_dice"]
    palifico = view["palifico_round"]
    unseen: int = view["dice_in_play"] - len(own)

    def expected(face: int) -> float:
        share = float(wild_chance(face, not palifico))
        return count_matching(own, face, not palifico) + unseen * share

    current = view.get("current_bid")
    standing = None if current is None else (current["quantity"], current["face"])
    if standing is not None and standing[0] > expected(standing[1]):
        return {"dudo": {}}
    raises = legal_bids(standing, view["dice_in_play"], palifico, view["options"]["open_on_ones"])
    believable = [(q, f) for q, f in raises if q <= expected(f)]
    if not believable:
        return {"dudo": {}}
    if standing is None:
        face = max({f for _, f in believable}, key=lambda f: (expected(f), f))
        quantity = max(q for q, f in believable if f == face)
    else:
        # The lowest raise (a one counting as two dice of another face), on its likeliest face.
        quantity, face = min(believable, key=lambda b: (2 * b[0] if b[1] == 1 else b[0], -expected(b[1])))
    return {"bid": {"quantity": quantity, "face": face}}


@dataclass
class Tally:
    games: int = 0
    wins: int = 0  # games the CPU won
    moves: int = 0  # the bots' moves (the CPU's are played inside them)
    places: list[int] = field(default_factory=lambda: [0] * SEATS)  # the CPU's, 1st to last


def play_game(number: int, seed: int, dice: int, tally: Tally, control: bool = False) -> None:
    match_seed = hashlib.sha256(f"dudo strength {seed} {number}".encode()).digest()
    rng, cpu_rng = MatchRng(match_seed), MatchRng(cpu_seed(match_seed))
    rnd = random.Random(f"{seed} {number}")
    cpu_at = number % SEATS
    others = [s for s in range(SEATS) if s != cpu_at]
    bots: dict[int, Bot] = {
        cpu_at: expected_count_bidder,  # played only in a control run
        others[0]: random_bidder,
        others[1]: expected_count_bidder,
        others[2]: expected_count_bidder,
    }
    now = 0.0
    cpus = [] if control else [cpu_at]
    table, _ = play.start(GAME, SEATS, {"dice_per_player": dice}, Context(rng, now, now), cpus, cpu_rng)
    for _ in range(MAX_MOVES):
        if GAME.outcome(table.state) is not None:
            break
        (seat,) = GAME.to_act(table.state)
        now += 1.0
        action = bots[seat](table, seat, rnd)
        play.act(GAME, table, seat, action, Context(rng, now, table.idle_since), cpu_rng)
        tally.moves += 1
    result = GAME.outcome(table.state)
    if result is None:
        raise RuntimeError(f"game {number} did not end in {MAX_MOVES} moves")
    tally.games += 1
    tally.wins += result.ranks[cpu_at] == 1
    tally.places[result.ranks[cpu_at] - 1] += 1


def wilson(wins: int, games: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return centre - half, centre + half


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=2_000, help="games to play (default 2000)")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the whole run (default 2026)")
    parser.add_argument("--dice", type=int, default=3, help="dice per player, 1..5 (default 3, Lizumo's)")
    parser.add_argument("--max-seconds", type=float, default=600.0, help="stop after this long (default 600)")
    parser.add_argument(
        "--control", action="store_true", help="an expected-count player in the CPU's seat (harness check)"
    )
    args = parser.parse_args(argv)
    tally = Tally()
    started = time.perf_counter()
    for number in range(args.games):
        if time.perf_counter() - started > args.max_seconds:
            print(f"stopped after {args.max_seconds:.0f} s: {tally.games} of {args.games} games played")
            break
        play_game(number, args.seed, args.dice, tally, args.control)
    elapsed = time.perf_counter() - started
    low, high = wilson(tally.wins, tally.games)
    rate = tally.wins / tally.games if tally.games else 0.0
    who = "CONTROL: expected-count bidder in the CPU's seat" if args.control else "Dudo CPU"
    print(f"{who} vs random bidder + 2 expected-count bidders, {SEATS} players, {args.dice} dice each")
    print(f"games {tally.games}  CPU wins {tally.wins}  win rate {rate:.1%}  95% CI [{low:.1%}, {high:.1%}]")
    print(f"chance level 25.0%  CPU places 1st..4th: {tally.places}")
    per_game = elapsed / max(tally.games, 1) * 1000
    print(f"{tally.moves} bot moves (CPU moves inside them), {elapsed:.1f} s ({per_game:.1f} ms/game)")


if __name__ == "__main__":
    main()
