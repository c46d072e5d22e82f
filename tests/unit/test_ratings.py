"""Glicko-2 against Glickman's worked example, and the team and multi-player
uses of it, with property tests over random ratings and results."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway import ratings
from gateway.ratings import (
    DRAW,
    LOSS,
    MAX_DEVIATION,
    PROVISIONAL_DEVIATION,
    SCALE,
    WIN,
    Rating,
    composite,
    expected,
    g,
    new_volatility,
    pairwise_results,
    pre_period_deviation,
    to_glicko2,
    update,
    update_placings,
    update_teams,
)

# --- Glickman, "Example of the Glicko-2 system" ---------------------------------------------------
#
# The paper prints its intermediates rounded (g to 4 places, E to 3, …) and
# carries the rounded values into the next step, so its final figures differ
# from an unrounded computation in the last printed digit. Each step is checked
# to the paper's printed precision; where the paper's number only comes out of
# its rounded inputs, the test feeds those inputs to the same step function.

PAPER_PLAYER = Rating(1500, 200, 0.06)
PAPER_OPPONENTS = (Rating(1400, 30), Rating(1550, 100), Rating(1700, 300))
PAPER_SCORES = (WIN, LOSS, LOSS)
PAPER_RESULTS = list(zip(PAPER_OPPONENTS, PAPER_SCORES, strict=True))
PAPER_TAU = 0.5


def test_paper_step2_converts_to_the_glicko2_scale() -> None:
    assert to_glicko2(PAPER_PLAYER) == pytest.approx((0.0, 1.1513), abs=5e-5)
    mus, phis = zip(*(to_glicko2(o) for o in PAPER_OPPONENTS), strict=True)
    assert mus == pytest.approx((-0.5756, 0.2878, 1.1513), abs=5e-5)
    assert phis == pytest.approx((0.1727, 0.5756, 1.7269), abs=5e-5)


def test_paper_step3_g_and_expected_scores() -> None:
    mu, _ = to_glicko2(PAPER_PLAYER)
    gs, es = [], []
    for opponent in PAPER_OPPONENTS:
        mu_j, phi_j = to_glicko2(opponent)
        gs.append(g(phi_j))
        es.append(expected(mu, mu_j, phi_j))
    assert gs == pytest.approx([0.9955, 0.9531, 0.7242], abs=5e-5)
    assert es == pytest.approx([0.639, 0.432, 0.303], abs=5e-4)


def test_paper_steps3_4_v_and_delta() -> None:
    # The paper's v = 1.7785 and Δ = −0.4834 come from its rounded g and E;
    # from those inputs the formulas give exactly its numbers …
    gs, es = (0.9955, 0.9531, 0.7242), (0.639, 0.432, 0.303)
    v = 1 / sum(gj * gj * ej * (1 - ej) for gj, ej in zip(gs, es, strict=True))
    delta = v * sum(gj * (s - ej) for gj, ej, s in zip(gs, es, PAPER_SCORES, strict=True))
    assert v == pytest.approx(1.7785, abs=5e-5)
    assert delta == pytest.approx(-0.4834, abs=5e-5)
    # … and unrounded they are 1.77898 and −0.48393 — within the rounding.
    mu, _ = to_glicko2(PAPER_PLAYER)
    terms = [(g(pj), expected(mu, mj, pj)) for mj, pj in (to_glicko2(o) for o in PAPER_OPPONENTS)]
    v_exact = 1 / sum(gj * gj * ej * (1 - ej) for gj, ej in terms)
    delta_exact = v_exact * sum(gj * (s - ej) for (gj, ej), s in zip(terms, PAPER_SCORES, strict=True))
    assert v_exact == pytest.approx(1.7785, abs=1e-3)
    assert delta_exact == pytest.approx(-0.4834, abs=1e-3)


def test_paper_step5_volatility_by_illinois() -> None:
    # The paper's example takes the "Δ² ≤ φ² + v" branch of the bracket search.
    assert (-0.4834) ** 2 <= 1.1513**2 + 1.7785
    sigma_prime = new_volatility(0.06, 1.1513, 1.7785, -0.4834, PAPER_TAU)
    assert sigma_prime == pytest.approx(0.05999, abs=1e-5)


def test_paper_step6_pre_rating_period_deviation() -> None:
    assert pre_period_deviation(1.1513, 0.05999) == pytest.approx(1.152862, abs=5e-7)


def test_paper_worked_example() -> None:
    new = update(PAPER_PLAYER, PAPER_RESULTS, PAPER_TAU)
    mu_prime, phi_prime = to_glicko2(new)
    # Step 7, to the paper's four places.
    assert mu_prime == pytest.approx(-0.2069, abs=5e-5)
    assert phi_prime == pytest.approx(0.8722, abs=5e-5)
    # Step 8: r' = 1464.06, RD' = 151.52, σ' = 0.05999. The paper's 1464.06 is
    # 173.7178 × (−0.2069) + 1500 = 1464.058 from the rounded μ'; unrounded it
    # is 1464.0507, so the rating is checked to within one unit of the last
    # printed place (and likewise σ' = 0.0599960 against the printed 0.05999).
    assert new.rating == pytest.approx(1464.06, abs=0.01)
    assert new.deviation == pytest.approx(151.52, abs=0.005)
    assert new.volatility == pytest.approx(0.05999, abs=1e-5)


def test_paper_worked_example_unrounded() -> None:
    # The same example carried through without rounding — what other careful
    # Glicko-2 implementations report — pinned so a regression shows up.
    new = update(PAPER_PLAYER, PAPER_RESULTS, PAPER_TAU)
    assert new.rating == pytest.approx(1464.050671, abs=1e-6)
    assert new.deviation == pytest.approx(151.516524, abs=1e-6)
    assert new.volatility == pytest.approx(0.059996, abs=1e-6)


# --- The single-player update --------------------------------------------------------------------


def test_defaults_are_the_papers() -> None:
    assert Rating() == Rating(1500.0, 350.0, 0.06)
    assert update.__defaults__ == (0.5,)


def test_provisional_above_the_threshold() -> None:
    assert Rating().provisional
    assert Rating(deviation=PROVISIONAL_DEVIATION + 0.01).provisional
    assert not Rating(deviation=PROVISIONAL_DEVIATION).provisional
    assert not Rating(deviation=50).provisional


def test_a_newcomer_stops_being_provisional_after_about_ten_games() -> None:
    player, opponent = Rating(), Rating(1500, 50)
    for game in range(1, 13):
        player = update(player, [(opponent, game % 2)])
    assert not player.provisional


def test_no_games_only_grows_the_deviation() -> None:
    new = update(PAPER_PLAYER, [])
    assert new.rating == PAPER_PLAYER.rating
    assert new.volatility == PAPER_PLAYER.volatility
    assert new.deviation == pytest.approx(SCALE * math.sqrt((200 / SCALE) ** 2 + 0.06**2))
    assert new.deviation > PAPER_PLAYER.deviation


def test_deviation_is_capped_at_the_initial_deviation() -> None:
    assert update(Rating(), []).deviation == MAX_DEVIATION
    assert update(Rating(1500, 349.9), []).deviation == MAX_DEVIATION
    idle = Rating(1800, 40)
    for _ in range(2000):
        idle = update(idle, [])
    assert idle == Rating(1800, MAX_DEVIATION, 0.06)


def test_surprises_raise_volatility_and_expected_results_lower_it() -> None:
    player, stronger = Rating(1500, 50), Rating(2300, 50)
    mu, phi = to_glicko2(player)
    mu_j, phi_j = to_glicko2(stronger)
    e = expected(mu, mu_j, phi_j)
    v = 1 / (g(phi_j) ** 2 * e * (1 - e))
    delta = v * g(phi_j) * (1 - e)
    assert delta**2 > phi**2 + v  # the other branch of step 5's bracket
    assert update(player, [(stronger, WIN)]).volatility > player.volatility
    assert update(player, [(stronger, LOSS)]).volatility < player.volatility


def test_results_count_as_one_period_whatever_their_order() -> None:
    assert update(PAPER_PLAYER, PAPER_RESULTS) == update(PAPER_PLAYER, PAPER_RESULTS[::-1])


def test_absurd_rating_gaps_stay_finite() -> None:
    weak, strong = Rating(0, 30), Rating(100_000, 30)
    for new in (update(weak, [(strong, WIN)]), update(strong, [(weak, LOSS)])):
        assert math.isfinite(new.rating) and 0 < new.deviation <= MAX_DEVIATION
        assert math.isfinite(new.volatility) and new.volatility > 0
    assert update(strong, [(weak, WIN)]).rating == pytest.approx(strong.rating, abs=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Rating(math.nan),
        lambda: Rating(math.inf),
        lambda: Rating(deviation=0),
        lambda: Rating(deviation=350.5),
        lambda: Rating(volatility=0),
        lambda: Rating(volatility=math.nan),
        lambda: update(Rating(), [(Rating(), 1.5)]),
        lambda: update(Rating(), [(Rating(), -0.5)]),
        lambda: update(Rating(), [(Rating(), math.nan)]),
        lambda: update(Rating(), [], tau=0),
        lambda: update_teams([], [Rating()], WIN),
        lambda: update_teams([Rating()], [Rating()], 2.0),
        lambda: update_placings([Rating()], [1]),
        lambda: update_placings([Rating(), Rating()], [1]),
    ],
)
def test_rejects_invalid_input(make: Callable[[], object]) -> None:
    with pytest.raises(ValueError):
        make()


# --- Draws ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("opponent", [Rating(1300, 80), Rating(1500, 80), Rating(1800, 200)])
def test_a_draw_moves_the_rating_between_a_win_and_a_loss(opponent: Rating) -> None:
    player = Rating(1500, 120)
    win, draw, loss = (update(player, [(opponent, s)]).rating for s in (WIN, DRAW, LOSS))
    assert win > draw > loss


def test_a_draw_between_equals_barely_moves_ratings() -> None:
    player = Rating(1620, 80, 0.06)
    new = update(player, [(player, DRAW)])
    assert new.rating == player.rating  # E = 0.5 exactly: Δ = 0
    assert new.deviation < player.deviation  # still a game played
    near = update(player, [(Rating(1640, 80), DRAW)])
    assert 0 < near.rating - player.rating < 1


def test_a_draw_against_a_stronger_player_gains() -> None:
    player = Rating(1500, 80)
    assert update(player, [(Rating(1700, 80), DRAW)]).rating > player.rating
    assert update(player, [(Rating(1300, 80), DRAW)]).rating < player.rating


# --- Teams ---------------------------------------------------------------------------------------


def test_composite_is_mean_rating_and_rms_deviation() -> None:
    team = composite([Rating(1600, 50, 0.05), Rating(1400, 350, 0.07)])
    assert team.rating == pytest.approx(1500)
    assert team.deviation == pytest.approx(math.sqrt((50**2 + 350**2) / 2))  # 250, not the mean 200
    assert team.volatility == pytest.approx(0.06)


def test_composite_of_identical_players_is_that_player() -> None:
    player = Rating(1733.3, 97.1, 0.061)
    assert composite([player, player]) == player
    assert composite([player]) == player


def test_one_player_teams_are_the_head_to_head_update() -> None:
    a, b = Rating(1550, 90), Rating(1480, 200)
    assert update_teams([a], [b], WIN) == ([update(a, [(b, WIN)])], [update(b, [(a, LOSS)])])


def test_team_winners_go_up_and_losers_down() -> None:
    team_a = [Rating(1500, 100), Rating(1700, 60)]
    team_b = [Rating(1650, 80), Rating(1550, 150)]
    new_a, new_b = update_teams(team_a, team_b, WIN)
    assert all(new.rating > old.rating for new, old in zip(new_a, team_a, strict=True))
    assert all(new.rating < old.rating for new, old in zip(new_b, team_b, strict=True))


def test_the_weaker_partner_gains_more_from_the_same_win() -> None:
    weak, strong = Rating(1400, 100), Rating(1800, 100)
    (new_weak, new_strong), _ = update_teams([weak, strong], [Rating(1600, 100), Rating(1600, 100)], WIN)
    assert new_weak.rating - weak.rating > new_strong.rating - strong.rating > 0


def test_the_less_known_partner_moves_more() -> None:
    known, unknown = Rating(1600, 50), Rating(1600, 300)
    (new_known, new_unknown), _ = update_teams([known, unknown], [Rating(1600, 80)] * 2, LOSS)
    assert unknown.rating - new_unknown.rating > known.rating - new_known.rating > 0


def test_team_update_is_symmetric() -> None:
    team_a = [Rating(1500, 100), Rating(1700, 60)]
    team_b = [Rating(1650, 80), Rating(1550, 150)]
    for score in (WIN, DRAW, LOSS):
        new_a, new_b = update_teams(team_a, team_b, score)
        assert update_teams(team_b, team_a, 1 - score) == (new_b, new_a)


def test_equal_teams_gain_what_the_other_loses() -> None:
    # Exactly so when the partners' deviations agree: the winners' 1500 and the
    # losers' 1700 are then mirror images around the opposing composite (1600).
    team_a = [Rating(1500, 100), Rating(1700, 100)]
    team_b = [Rating(1700, 100), Rating(1500, 100)]
    new_a, new_b = update_teams(team_a, team_b, WIN)
    gained = sum(n.rating - o.rating for n, o in zip(new_a, team_a, strict=True))
    lost = sum(o.rating - n.rating for n, o in zip(new_b, team_b, strict=True))
    assert gained == pytest.approx(lost)


def test_in_a_draw_each_partner_is_measured_against_the_other_team() -> None:
    # Equal teams drew: the team result was as expected, but each player is
    # rated on their own — the weaker partner did better than *they* were
    # expected to, the stronger worse.
    team = [Rating(1500, 100), Rating(1700, 100)]
    (weak, strong), _ = update_teams(team, team[::-1], DRAW)
    assert 0 < weak.rating - 1500 == pytest.approx(1700 - strong.rating)


# --- Multi-player tables -------------------------------------------------------------------------


def test_placings_become_pairwise_games_with_shared_places_drawn() -> None:
    a, b, c = Rating(1400), Rating(1500), Rating(1600)
    assert pairwise_results([a, b, c], [2, 1, 2]) == [
        [(b, LOSS), (c, DRAW)],
        [(a, WIN), (c, WIN)],
        [(a, DRAW), (b, LOSS)],
    ]


def test_the_winner_gains_and_the_last_loses() -> None:
    table = [Rating(1500, 120)] * 4
    first, second, third, last = update_placings(table, [1, 2, 3, 4])
    assert first.rating > second.rating > 1500 > third.rating > last.rating
    assert first.rating - 1500 == pytest.approx(1500 - last.rating)


def test_a_full_tie_moves_almost_nothing() -> None:
    equals = [Rating(1500, 90)] * 5
    assert [p.rating for p in update_placings(equals, [1] * 5)] == [1500.0] * 5
    close = [Rating(1490, 90), Rating(1500, 90), Rating(1510, 90)]
    moved = [n.rating - o.rating for n, o in zip(update_placings(close, [2, 2, 2]), close, strict=True)]
    won = update_placings(close, [1, 2, 3])[0].rating - close[0].rating
    assert all(abs(m) < won / 10 for m in moved)  # 1.7 points against 42 for winning that table
    assert moved[0] > 0 > moved[2]  # drawing with stronger players still gains a little


def test_two_player_placings_are_the_head_to_head_update() -> None:
    a, b = Rating(1550, 90, 0.05), Rating(1480, 200, 0.07)
    assert update_placings([a, b], [1, 2]) == [update(a, [(b, WIN)]), update(b, [(a, LOSS)])]
    assert update_placings([a, b], [2, 1]) == [update(a, [(b, LOSS)]), update(b, [(a, WIN)])]
    assert update_placings([a, b], [1, 1]) == [update(a, [(b, DRAW)]), update(b, [(a, DRAW)])]


def test_only_the_order_of_ranks_matters() -> None:
    table = [Rating(1450, 100), Rating(1500, 200), Rating(1620, 70)]
    assert update_placings(table, [3, 1, 2]) == update_placings(table, [30, 10, 20])


def test_a_table_is_one_period_not_a_sequence_of_games() -> None:
    table = [Rating(1500, 200), Rating(1600, 80), Rating(1400, 150)]
    new = update_placings(table, [1, 2, 3])
    assert new[0] == update(table[0], [(table[1], WIN), (table[2], WIN)])
    sequential = update(update(table[0], [(table[1], WIN)]), [(table[2], WIN)])
    assert new[0] != sequential


# --- Properties ----------------------------------------------------------------------------------

ratings_st = st.builds(
    Rating,
    rating=st.floats(0, 4000),
    deviation=st.floats(1, MAX_DEVIATION),
    volatility=st.floats(0.01, 0.2),
)
scores_st = st.sampled_from([WIN, DRAW, LOSS])
taus_st = st.floats(0.2, 1.2)


def assert_sane(r: Rating) -> None:
    assert math.isfinite(r.rating)
    assert 0 < r.deviation <= MAX_DEVIATION
    assert math.isfinite(r.volatility) and r.volatility > 0


@given(ratings_st, st.lists(st.tuples(ratings_st, scores_st | st.floats(0, 1)), max_size=8), taus_st)
def test_updates_stay_in_range(player: Rating, results: list[tuple[Rating, float]], tau: float) -> None:
    assert_sane(update(player, results, tau))


@given(ratings_st, st.lists(ratings_st, min_size=1, max_size=6), taus_st)
def test_wins_never_lower_and_losses_never_raise(player: Rating, opponents: list[Rating], tau: float) -> None:
    assert update(player, [(opponents[0], WIN)], tau).rating >= player.rating
    assert update(player, [(opponents[0], LOSS)], tau).rating <= player.rating
    assert update(player, [(o, WIN) for o in opponents], tau).rating >= player.rating
    assert update(player, [(o, LOSS) for o in opponents], tau).rating <= player.rating


@given(ratings_st, ratings_st, st.integers(1, 6), st.data())
def test_monotone_in_score_against_identical_opponents(
    player: Rating, opponent: Rating, games: int, data: st.DataObject
) -> None:
    # Against identical opponents only the total score matters; a higher total
    # never gives a lower rating.
    low, high = sorted(data.draw(st.lists(st.integers(0, 2 * games), min_size=2, max_size=2, unique=True)))

    def rated(half_points: int) -> float:
        wins, draws = divmod(half_points, 2)
        scores = [WIN] * wins + [DRAW] * draws + [LOSS] * (games - wins - draws)
        return update(player, [(opponent, s) for s in scores]).rating

    assert rated(low) <= rated(high)


@given(st.lists(ratings_st, min_size=1, max_size=2), st.lists(ratings_st, min_size=1, max_size=2), scores_st)
def test_team_updates_stay_in_range_and_follow_the_result(
    team_a: list[Rating], team_b: list[Rating], score: float
) -> None:
    new_a, new_b = update_teams(team_a, team_b, score)
    for new in new_a + new_b:
        assert_sane(new)
    if score == WIN:
        assert all(n.rating >= o.rating for n, o in zip(new_a, team_a, strict=True))
        assert all(n.rating <= o.rating for n, o in zip(new_b, team_b, strict=True))


@given(st.lists(st.tuples(ratings_st, st.integers(1, 6)), min_size=2, max_size=6), st.randoms())
def test_placings_are_seat_order_invariant(seats: list[tuple[Rating, int]], rng: random.Random) -> None:
    table, ranks = [r for r, _ in seats], [k for _, k in seats]
    new = update_placings(table, ranks)
    for r in new:
        assert_sane(r)
    order = list(range(len(seats)))
    rng.shuffle(order)
    shuffled = update_placings([table[i] for i in order], [ranks[i] for i in order])
    assert shuffled == [new[i] for i in order]
    best, worst = min(ranks), max(ranks)
    for old, rank, r in zip(table, ranks, new, strict=True):
        if ranks.count(rank) == 1 and rank == best:
            assert r.rating >= old.rating
        if ranks.count(rank) == 1 and rank == worst:
            assert r.rating <= old.rating


def test_module_is_pure() -> None:
    # No I/O, no clock, no randomness: only math and typing helpers are imported.
    source = ratings.__file__
    with open(source, encoding="utf-8") as f:
        imports = {line.split()[1] for line in f if line.startswith(("import ", "from "))}
    assert imports <= {"__future__", "math", "collections.abc", "dataclasses"}
