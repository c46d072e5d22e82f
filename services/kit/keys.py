"""Every Redis key and channel Rodada uses, named in one place.

A match and its table share the ``{m:<id>}`` hash tag, so they live in one
Redis Cluster slot and one script may write them together; a matchmaking
queue's keys share ``{mm:<queue>}``. Keys without a tag are independent of
each other. docs/architecture.md has the whole schema with what each holds.
"""

from __future__ import annotations

# -- a match (and its table: the table id is the match id) ----------------------


def match(match_id: str) -> str:
    """Hash: ``v`` version, ``e`` last event id, ``doc`` the match record,
    ``tv``/``table`` the table's version and record."""
    return f"{{m:{match_id}}}"


def events(match_id: str) -> str:
    """Stream: the table's and match's history, entry ``0-N`` = event N."""
    return f"{{m:{match_id}}}:ev"


def live(match_id: str) -> str:
    """(Sharded) pub/sub channel: each write's new events, and snapshots
    while someone watches."""
    return f"{{m:{match_id}}}:live"


# -- per game -------------------------------------------------------------------


def active(game: str) -> str:
    """Set: the game's matches being played (the active-matches gauge)."""
    return f"active:{game}"


def clocks(game: str) -> str:
    """Sorted set: ``<match>:<version>`` scored by its deadline."""
    return f"clocks:{game}"


def clock_leases(game: str) -> str:
    """Sorted set: deadlines a replica has taken, scored by when its lease ends."""
    return f"clocks:{game}:leased"


def clock_member(match_id: str, version: int) -> str:
    return f"{match_id}:{version}"


def open_tables(game: str) -> str:
    """Set: the game's open tables still seating."""
    return f"open-tables:{game}"


RESULTS = "results"  # stream: finished matches, for ratings and histories


# -- tables and invites -----------------------------------------------------------


def invite(code: str) -> str:
    """String: an invite code → ``{table, team}``, with a TTL."""
    return f"invite:{code}"


# -- accounts and sessions ----------------------------------------------------------


def user(user_id: str) -> str:
    return f"user:{user_id}"


def username(name: str) -> str:
    return f"username:{name.lower()}"


def refresh_token(jti: str) -> str:
    return f"refresh:{jti}"


def presence(match_id: str, user_id: str) -> str:
    return f"presence:{match_id}:{user_id}"


def feeds(user_id: str) -> str:
    """Sorted set: a user's open feeds on every replica, scored by expiry."""
    return f"feeds:{user_id}"


def rate(limit: str, subject: str, window: int) -> str:
    return f"rl:{limit}:{subject}:{window}"


# -- ratings and histories ----------------------------------------------------------


def rated(match_id: str) -> str:
    """String: this match's result has been recorded."""
    return f"rated:{match_id}"


def rating(game: str, mode: str, user_id: str) -> str:
    return f"rating:{game}:{mode}:{user_id}"


def leaderboard(game: str, mode: str) -> str:
    return f"leaderboard:{game}:{mode}"


def rating_history(game: str, mode: str, user_id: str) -> str:
    return f"rating-history:{game}:{mode}:{user_id}"


def match_history(user_id: str) -> str:
    return f"matches:{user_id}"
