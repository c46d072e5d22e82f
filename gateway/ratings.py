"""Player ratings: Glicko-2, and its use for team games and multi-player tables.

Pure arithmetic — no I/O, no clock. A *rating period* is whatever the caller
decides to rate at once; Rodada rates each finished match as its own period.

The core (:func:`update`) follows Mark Glickman, "Example of the Glicko-2
system" (glicko.net/glicko/glicko2.pdf) step by step; the comments name the
paper's steps and symbols (μ, φ, σ, τ, g, E, v, Δ, f, A, B, C, ε, φ*) so the
code can be read next to it. Deliberate departures, each documented where it
happens:

* φ* is capped at the initial deviation (350), so a long absence never makes a
  player *less* known than a newcomer (Glickman's Glicko-1 paper caps RD at 350
  the same way).
* Step 8 adds the change in μ to the stored rating instead of converting μ'
  back from scratch. It is the same number mathematically, but it does not
  pass an unchanged rating through the /173.7178 · 173.7178 round trip, so
  "no games → rating unchanged" and "a win never lowers a rating" hold
  exactly in floating point too.
* E is computed from g(φj)(μ − μj) clamped to ±30 (:data:`MAX_LOGIT`), which
  only bites at rating gaps above ~5,000 points and keeps v, Δ and the
  volatility iteration finite and fast for any input.

Sums use :func:`math.fsum` (correctly rounded), so the result of an update
does not depend on the order of the results — permuting the seats of a table
permutes the output exactly.

Team games (Bozó duplas, Dominó) rate each player against the opposing team's
composite (:func:`composite`, :func:`update_teams`). Multi-player tables
(Dudo, Yatzy, Bozu Mekuri) are rated pairwise from the placings
(:func:`update_placings`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Step 1 defaults, on the Glicko scale.
DEFAULT_RATING = 1500.0
DEFAULT_DEVIATION = 350.0
DEFAULT_VOLATILITY = 0.06
# τ constrains how fast the volatility may change; Glickman suggests 0.3–1.2
# and uses 0.5 in the worked example.
DEFAULT_TAU = 0.5

# Step 2: the Glicko ↔ Glicko-2 scale factor (400 / ln 10), as the paper gives it.
SCALE = 173.7178

# Step 5: the convergence tolerance ε of the volatility iteration.
EPSILON = 0.000001
# Illinois converges superlinearly from a bracketing start; with the exponent
# clamped (MAX_LOGIT) updates need at most about 10 rounds. The bound only turns
# a bug into an error instead of a hang.
MAX_ITERATIONS = 100

# The largest |g(φj)(μ − μj)| that E is computed from: a rating gap of about
# 5,200 points against a well-known opponent (7,800 against a newcomer), far
# beyond any two real players. There E is within 1e-13 of certainty, so the
# clamp changes no expected score that matters; what it prevents is v ~ e^|x|
# growing without bound for absurd gaps, which first slows the volatility
# iteration (some 15 rounds at 6,000 points, 50 at 10,000) and then overflows it.
MAX_LOGIT = 30.0

# φ* never exceeds the initial deviation: an absent player drifts back to
# "unknown", not past it.
MAX_DEVIATION = DEFAULT_DEVIATION

# A rating whose deviation is above this is shown as provisional ("1500?").
# 110 is the threshold Lichess uses with Glicko-2: a newcomer (RD 350) drops
# below it after roughly a dozen games against established players, and a
# settled player who stays away long enough for the deviation to grow back
# past it is flagged again — the 95% interval (±2 RD) is then wider than
# ±220, too wide to rank anyone by.
PROVISIONAL_DEVIATION = 110.0

# Game scores, from the player's side.
WIN, DRAW, LOSS = 1.0, 0.5, 0.0


@dataclass(frozen=True)
class Rating:
    """A player's rating on the Glicko scale (what players see).

    ``deviation`` is the RD: one standard deviation of the estimate of
    ``rating``. ``volatility`` (σ) is how erratic the player's results are.
    """

    rating: float = DEFAULT_RATING
    deviation: float = DEFAULT_DEVIATION
    volatility: float = DEFAULT_VOLATILITY

    def __post_init__(self) -> None:
        if not math.isfinite(self.rating):
            raise ValueError(f"rating must be finite, got {self.rating!r}")
        if not 0.0 < self.deviation <= MAX_DEVIATION:
            raise ValueError(f"deviation must be in (0, {MAX_DEVIATION}], got {self.deviation!r}")
        if not (math.isfinite(self.volatility) and self.volatility > 0):
            raise ValueError(f"volatility must be positive and finite, got {self.volatility!r}")

    @property
    def provisional(self) -> bool:
        """Too uncertain to rank by; see :data:`PROVISIONAL_DEVIATION`."""
        return self.deviation > PROVISIONAL_DEVIATION


# --- Glicko-2, step by step (the paper's numbering) ---------------------------------------------


def to_glicko2(player: Rating) -> tuple[float, float]:
    """Step 2: (μ, φ) on the Glicko-2 scale."""
    mu = (player.rating - DEFAULT_RATING) / SCALE
    phi = player.deviation / SCALE
    return mu, phi


def g(phi: float) -> float:
    """Step 3: g(φ) = 1 / sqrt(1 + 3φ²/π²) — discounts a game by the opponent's uncertainty."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def expected(mu: float, mu_j: float, phi_j: float) -> float:
    """Step 3: E(μ, μj, φj) = 1 / (1 + exp(−g(φj)(μ − μj))), the expected score against j.

    The exponent is clamped to ±MAX_LOGIT — see there — and ``exp`` only ever
    sees a non-positive argument, so no rating gap can overflow.
    """
    x = max(-MAX_LOGIT, min(MAX_LOGIT, g(phi_j) * (mu - mu_j)))
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def new_volatility(sigma: float, phi: float, v: float, delta: float, tau: float) -> float:
    """Step 5: σ', the root of f by the Illinois algorithm (regula falsi with halving).

    f(x) = e^x (Δ² − φ² − v − e^x) / (2 (φ² + v + e^x)²) − (x − a) / τ²,  a = ln σ²,
    and σ' = e^(A/2) once |B − A| ≤ ε.
    """
    a = math.log(sigma * sigma)
    phi2 = phi * phi
    delta2 = delta * delta

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta2 - phi2 - v - ex) / (2.0 * (phi2 + v + ex) ** 2) - (x - a) / (tau * tau)

    # 5.2: initial values A and B, which bracket the root of f.
    big_a = a
    if delta2 > phi2 + v:
        big_b = math.log(delta2 - phi2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0.0:
            k += 1
        big_b = a - k * tau

    # 5.3
    f_a, f_b = f(big_a), f(big_b)

    # 5.4: iterate until |B − A| ≤ ε.
    for _ in range(MAX_ITERATIONS):
        if abs(big_b - big_a) <= EPSILON:
            break
        # (a) the secant (regula falsi) point
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        # (b) If f(C) and f(B) differ in sign (or f(C) = 0), the root lies
        # between C and B, so B becomes the new A. Otherwise it is still
        # between A and C: A stays and f(A) is halved — the Illinois change to
        # regula falsi that keeps a stale end from pinning the secant. "≤ 0",
        # not "< 0": landing exactly on the root (f(C) = 0) must move A too,
        # or f(A) would be halved forever with |B − A| unchanged.
        if f_c * f_b <= 0.0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        # (c)
        big_b, f_b = big_c, f_c
    else:  # pragma: no cover - a bracketed Illinois iteration always converges
        raise ArithmeticError("Glicko-2 volatility iteration did not converge")

    # 5.5
    return math.exp(big_a / 2.0)


def pre_period_deviation(phi: float, sigma: float) -> float:
    """Step 6: φ* = sqrt(φ² + σ'²), capped at the initial deviation.

    This is also the whole update of a player who did not play in the period
    (with σ' = σ). The cap is ours, not the paper's: without it the deviation
    of an absent player grows without bound, and a returning player would
    swing more than a newcomer.
    """
    return min(math.sqrt(phi * phi + sigma * sigma), MAX_DEVIATION / SCALE)


def update(player: Rating, results: Sequence[tuple[Rating, float]], tau: float = DEFAULT_TAU) -> Rating:
    """The player's rating after one rating period.

    ``results`` are (opponent, score) with score 1 win, 0.5 draw, 0 loss (any
    value in [0, 1] is accepted, as Glicko-2 allows). All of them count as
    played at once, against the opponents' ratings *before* the period. With
    no results only the deviation grows (step 6 alone; rating and volatility
    are unchanged).
    """
    if not (math.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be positive and finite, got {tau!r}")
    for _, score in results:
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"scores are between 0 (loss) and 1 (win), got {score!r}")

    # Step 2
    mu, phi = to_glicko2(player)
    sigma = player.volatility

    if not results:
        # Did not play: step 6 alone, with σ' = σ.
        return Rating(player.rating, _deviation(pre_period_deviation(phi, sigma)), sigma)

    # Step 3: the estimated variance v of the rating from game outcomes alone,
    # v = [Σ g(φj)² E (1 − E)]⁻¹. 1 − E is taken as the opponent's side of the
    # same logistic, E(μj, μ, φj): equal in exact arithmetic, and it does not
    # lose its digits to cancellation when E is close to 1.
    games: list[tuple[float, float, float, float]] = []  # g(φj), E, 1 − E, sj
    for opponent, score in results:
        mu_j, phi_j = to_glicko2(opponent)
        games.append((g(phi_j), expected(mu, mu_j, phi_j), expected(mu_j, mu, phi_j), score))
    information = math.fsum(g_j * g_j * e_j * not_e_j for g_j, e_j, not_e_j, _ in games)
    v = 1.0 / information

    # Step 4: Δ, the estimated improvement: v Σ g(φj)(sj − E).
    performance = math.fsum(g_j * (s_j - e_j) for g_j, e_j, _, s_j in games)
    delta = v * performance

    # Step 5
    sigma_prime = new_volatility(sigma, phi, v, delta, tau)

    # Step 6
    phi_star = pre_period_deviation(phi, sigma_prime)

    # Step 7: φ' = 1 / sqrt(1/φ*² + 1/v);  μ' = μ + φ'² Σ g(φj)(sj − E).
    phi_prime = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu_change = phi_prime * phi_prime * performance

    # Step 8: r' = 173.7178 μ' + 1500, written as r + 173.7178 (μ' − μ) — the
    # same value, without the round trip of r through μ (see module docstring).
    return Rating(player.rating + SCALE * mu_change, _deviation(phi_prime), sigma_prime)


def _deviation(phi: float) -> float:
    """Step 8: RD' = 173.7178 φ'. φ was capped at 350/173.7178 on the
    Glicko-2 scale; the ``min`` only absorbs the rounding of scaling back."""
    return min(SCALE * phi, MAX_DEVIATION)


# --- Teams ---------------------------------------------------------------------------------------


def composite(team: Sequence[Rating]) -> Rating:
    """One rating standing for a team: the mean of its players' ratings and the
    root-mean-square of their deviations.

    Why the mean: a team's strength in a partnership game is taken to be the
    average of its members'; it keeps the composite on the same scale as a
    single player.

    Why the root-mean-square and not the mean of the deviations: variances, not
    standard deviations, are what average — the RMS is the deviation whose
    variance is the members' mean variance, so one unknown partner (350) with
    one established player (50) makes an uncertain team (~250), where the mean
    (200) would understate it. And not the deviation of the mean of independent
    skills (RMS/√n), because that would pretend two newcomers together are
    known better than either one; we rate the team as an opponent, and the
    partnership is no better known than its typical member.

    Both choices make a team of identical players exactly that player, so a
    team game between one-player "teams" is the head-to-head update. The
    volatility is the mean (Glicko-2 does not use the opponent's).
    """
    if not team:
        raise ValueError("a team has at least one player")
    n = len(team)
    return Rating(
        rating=math.fsum(p.rating for p in team) / n,
        deviation=math.sqrt(math.fsum(p.deviation * p.deviation for p in team) / n),
        volatility=math.fsum(p.volatility for p in team) / n,
    )


def update_teams(
    team_a: Sequence[Rating],
    team_b: Sequence[Rating],
    score_a: float,
    tau: float = DEFAULT_TAU,
) -> tuple[list[Rating], list[Rating]]:
    """Rate a game between two teams (Bozó duplas, Dominó): ``score_a`` is team
    A's score (1 win, 0.5 draw, 0 loss); team B scored ``1 − score_a``.

    Every player is updated by the ordinary single-game update against the
    opposing team's :func:`composite`, with their team's score. The player's
    *own* rating and deviation then decide how much they move: the weaker
    partner gains more from a win (they were expected to score less), and the
    less-known partner moves more.
    """
    if not 0.0 <= score_a <= 1.0:
        raise ValueError(f"scores are between 0 (loss) and 1 (win), got {score_a!r}")
    opponent_of_a, opponent_of_b = composite(team_b), composite(team_a)
    score_b = 1.0 - score_a
    return (
        [update(p, [(opponent_of_a, score_a)], tau) for p in team_a],
        [update(p, [(opponent_of_b, score_b)], tau) for p in team_b],
    )


# --- Multi-player tables ------------------------------------------------------------------------


def pairwise_results(ratings: Sequence[Rating], ranks: Sequence[int]) -> list[list[tuple[Rating, float]]]:
    """Each player's games implied by the placings: every pair of players is a
    game, the better (lower) rank scoring 1 and equal ranks a draw (0.5)."""
    if len(ratings) != len(ranks):
        raise ValueError(f"{len(ratings)} ratings but {len(ranks)} ranks")
    return [
        [
            (ratings[j], WIN if ranks[i] < ranks[j] else DRAW if ranks[i] == ranks[j] else LOSS)
            for j in range(len(ratings))
            if j != i
        ]
        for i in range(len(ratings))
    ]


def update_placings(
    ratings: Sequence[Rating], ranks: Sequence[int], tau: float = DEFAULT_TAU
) -> list[Rating]:
    """Rate a multi-player table (Dudo, Yatzy, Bozu Mekuri) from its placings.

    ``ranks[i]`` is the place of the player with ``ratings[i]``: 1 is first,
    equal ranks are shared places; only their order matters. The table is
    treated as every pair of players having played one game, and each player's
    games are applied as *one* rating period against the opponents' ratings
    before the table — not one after another, which would make the result
    depend on the order of the seats. Two players is exactly the head-to-head
    update.
    """
    if len(ratings) < 2:
        raise ValueError("a table has at least two players")
    return [
        update(player, games, tau)
        for player, games in zip(ratings, pairwise_results(ratings, ranks), strict=True)
    ]
