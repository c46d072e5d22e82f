"""The Redis keys of competitions (trophies, tournaments), named in one place.

A player's trophies share the player's hash tag with the rest of the
player's record (services/kit/keys.py); a tournament's record is one key,
changed only by compare-and-set on its version.
"""

from __future__ import annotations


def trophies(user_id: str) -> str:
    """Hash: trophy kind → JSON {awarded_at, match_id, tournament_id}; HSETNX
    awards each kind once however often a result is delivered."""
    return f"{{u:{user_id}}}:trophies"


def tournament(tournament_id: str) -> str:
    """Hash: ``v`` version, ``doc`` the tournament record (JSON)."""
    return f"tournament:{tournament_id}"


TOURNAMENTS = "tournaments"  # sorted set: every tournament id, scored by creation time
LIVE_TOURNAMENTS = "tournaments:live"  # set: registration or running, for the periodic check
TOURNAMENT_SCHEDULES = "tournament:schedules"  # hash: schedule id → JSON (gateway/competitions/schedules.py)


def board_acted(table_id: str) -> str:
    """Set: the users who made an accepted action at a tournament's table
    (the present ones, when the round's deadline passes)."""
    return f"tournament:acted:{table_id}"


# -- leagues: one game and mode's keys share a hash tag, so recording a result
# and closing a season are each one script.


def _league(game: str, mode: str) -> str:
    return f"{{lg:{game}:{mode}}}"


def league_season(game: str, mode: str) -> str:
    """Hash: ``number``, ``started_at``, ``ends_at``, ``version`` (bumped by
    every result), ``last_moves`` (JSON)."""
    return f"{_league(game, mode)}:season"


def league_divisions(game: str, mode: str) -> str:
    """Hash: player → division (1 = top), kept across seasons."""
    return f"{_league(game, mode)}:divisions"


def league_points(game: str, mode: str, season: int) -> str:
    """Sorted set: the season's players by points."""
    return f"{_league(game, mode)}:s{season}:points"


def league_played(game: str, mode: str, season: int) -> str:
    """Hash: player → ranked matches played this season."""
    return f"{_league(game, mode)}:s{season}:played"


def league_recorded(game: str, mode: str, season: int) -> str:
    """Set: ``<match>:<player>`` already counted this season."""
    return f"{_league(game, mode)}:s{season}:recorded"


LEAGUES = "leagues"  # set: ``<game>:<mode>`` of every league with a result, for the season check
