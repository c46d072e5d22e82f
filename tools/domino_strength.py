"""How strong is the Dominó CPU? It plays a partnership against a partnership
that always lays its heaviest playable tile.

    python -m tools.domino_strength [--matches N] [--seed TEXT] [--max-seconds S] [--control]

Pure engines through ``services.kit.play``: the CPU team's seats are the
table's CPU seats (the kit plays them with ``services.domino.cpu``, from their
own views), the other team's moves are sent by this tool as a player would.
Every match is seeded from ``--seed`` and its number, so a run replays
exactly; the CPU team sits at seats 0 & 2 in even matches and 1 & 3 in odd
ones. Matches are played to the game's 50 points. Prints the CPU team's win
rate with a 95% confidence interval (Wilson) and how long it took; stops
early, saying so, once ``--max-seconds`` have passed. With ``--control`` the
CPU team's seats play heaviest too (no CPU seats): the same matches, to check
the harness (that team should then win about half of them).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
import time
from dataclasses import dataclass

from services.domino.cpu import legal_options
from services.domino.engine import TARGET
from services.domino.game import GAME
from services.kit import play
from services.kit.engine import JSON, Context, Rng
from services.kit.rng import MatchRng, cpu_seed

Z95 = 1.959963984540054
TEAMS = ((0, 2), (1, 3))


def heaviest(view: JSON, seat: int, rng: Rng) -> JSON:
    """The heaviest playable tile, on any end it fits; ties broken by ``rng``."""
    options = legal_options(view)
    most = max(sum(option.tile) for option in options)
    heavy = [option for option in options if sum(option.tile) == most]
    return heavy[rng.randbelow(len(heavy))].action()


@dataclass
class Tally:
    matches: int = 0
    wins: int = 0
    rounds: int = 0
    cpu_points: int = 0
    other_points: int = 0


def play_match(number: int, seed: str, control: bool = False) -> tuple[bool, int, int, int]:
    """One match: whether the CPU team won, the rounds, and both teams' points."""
    match_seed = hashlib.sha256(f"domino-strength:{seed}:{number}".encode()).digest()
    rng, cpu_rng = MatchRng(match_seed), MatchRng(cpu_seed(match_seed))
    others_rng = MatchRng(hashlib.sha256(b"heaviest" + match_seed).digest())
    cpu_team = TEAMS[number % 2]
    table, _ = play.start(GAME, 4, {}, Context(rng, 0.0, 0.0), () if control else cpu_team, cpu_rng)
    while (outcome := GAME.outcome(table.state)) is None:
        [seat] = GAME.to_act(table.state)
        action = heaviest(GAME.view(table.state, seat), seat, others_rng)
        play.act(GAME, table, seat, action, Context(rng, 0.0, 0.0), cpu_rng)
    scores = outcome.scores
    return outcome.ranks[cpu_team[0]] == 1, table.state["round"], scores[cpu_team[0]], scores[1 - cpu_team[0]]


def wilson(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=2000, help="matches to play (default 2000)")
    parser.add_argument("--seed", default="rodada", help="seed text of the run (default 'rodada')")
    parser.add_argument("--max-seconds", type=float, default=900.0, help="stop after this long (default 900)")
    parser.add_argument(
        "--control", action="store_true", help="heaviest in the CPU team's seats (harness check)"
    )
    args = parser.parse_args(argv)

    tally = {team: Tally() for team in TEAMS}
    started = time.perf_counter()
    played = 0
    for number in range(args.matches):
        if time.perf_counter() - started > args.max_seconds:
            print(f"time limit: stopped after {played} of {args.matches} matches", file=sys.stderr)
            break
        won, rounds, cpu_points, other_points = play_match(number, args.seed, args.control)
        seats = tally[TEAMS[number % 2]]
        seats.matches += 1
        seats.wins += won
        seats.rounds += rounds
        seats.cpu_points += cpu_points
        seats.other_points += other_points
        played += 1
    elapsed = time.perf_counter() - started

    wins = sum(t.wins for t in tally.values())
    low, high = wilson(wins, played)
    who = (
        "CONTROL: heaviest-tile partnership in the CPU's seats" if args.control else "Dominó CPU partnership"
    )
    print(f"{who} vs heaviest-tile partnership, matches to {TARGET}")
    print(f"matches: {played} (seed {args.seed!r}), CPU team seats swapped every other match")
    rate = wins / played if played else 0.0
    print(f"CPU team win rate: {rate:.1%} (95% CI {low:.1%} to {high:.1%}), {wins} won")
    for team, t in tally.items():
        if t.matches:
            lo, hi = wilson(t.wins, t.matches)
            print(
                f"  CPU at seats {team[0]} & {team[1]}: {t.wins}/{t.matches} = {t.wins / t.matches:.1%}"
                f" (95% CI {lo:.1%} to {hi:.1%}), {t.rounds / t.matches:.2f} rounds a match,"
                f" average final score {t.cpu_points / t.matches:.1f} to {t.other_points / t.matches:.1f}"
            )
    print(f"time: {elapsed:.1f} s ({1000 * elapsed / max(played, 1):.1f} ms a match)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
