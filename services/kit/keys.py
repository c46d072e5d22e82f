"""Every Redis key and channel Rodada uses, named in one place.

Matches are spread over ``GROUPS`` slot groups by their id: a match's keys,
its table's (the table id is the match id) and its group's clock, leases,
active set and results stream all carry the group's hash tag ``{g<NN>}``, so
they live in one Redis Cluster slot and the one script that commits a move
also files its deadline and, at the end, its result. Readers of the per-group
keys (the gateway's clocks and results, the active gauge) visit every group.
A matchmaking queue's keys share ``{mm:<queue>}``. Keys without a tag are
independent of each other. docs/architecture.md has the whole schema.
"""

from __future__ import annotations

import zlib

# Fixed for the life of the data: a match's group is computed from its id.
# Enough groups to spread over any Cluster we would run (each group is one
# slot), few enough that visiting all of them each cycle costs nothing.
GROUPS = 64


def group(match_id: str) -> int:
    return zlib.crc32(match_id.encode()) % GROUPS


def _tag(group_index: int) -> str:
    return f"{{g{group_index:02d}}}"


# -- a match (and its table) ------------------------------------------------------


def match(match_id: str) -> str:
    """Hash: ``v`` version, ``w`` the write's token, ``e`` last event id,
    ``doc`` the match record, ``tv``/``table`` the table's version and record."""
    return f"{_tag(group(match_id))}:m:{match_id}"


def events(match_id: str) -> str:
    """Stream: the table's and match's history, entry ``0-N`` = event N."""
    return f"{match(match_id)}:ev"


def live(match_id: str) -> str:
    """(Sharded) pub/sub channel: each write's new events, and snapshots
    while someone watches."""
    return f"{match(match_id)}:live"


def match_of_live(channel: str) -> str:
    """The match a live channel belongs to."""
    return channel.split(":m:", 1)[1].removesuffix(":live")


# -- per game, per group (written by the commit script) ------------------------------


def active(game: str, group_index: int) -> str:
    """Set: the group's matches of the game being played (the active gauge)."""
    return f"{_tag(group_index)}:active:{game}"


def clocks(game: str, group_index: int) -> str:
    """Sorted set: ``<match>:<version>`` scored by its deadline."""
    return f"{_tag(group_index)}:clocks:{game}"


def clock_leases(game: str, group_index: int) -> str:
    """Sorted set: deadlines a gateway replica has taken, scored by when its
    lease runs out (same slot as the clock, so one script moves them)."""
    return f"{_tag(group_index)}:clocks:{game}:leased"


def clock_member(match_id: str, version: int) -> str:
    return f"{match_id}:{version}"


def results(group_index: int) -> str:
    """Stream: the group's finished matches, for ratings and histories."""
    return f"{_tag(group_index)}:results"


# -- per game --------------------------------------------------------------------------


def open_tables(game: str) -> str:
    """Sorted set: the game's open tables still seating, by creation time
    (a new name: it was a plain set)."""
    return f"open-tables-by-age:{game}"


def hosting(user_id: str) -> str:
    """Sorted set: tables the user opened that may not have started yet (by
    creation time; cleaned when read): the cap on open tables per user."""
    return f"hosting:{user_id}"


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
    """Sorted set: a user's open feeds on every replica, scored by expiry
    (in the user's slot, with the user's other keys)."""
    return f"{{u:{user_id}}}:feeds"


def feeds_at(user_id: str, table_id: str) -> str:
    """Sorted set: the user's open feeds of one table, scored by expiry."""
    return f"{{u:{user_id}}}:at:{table_id}"


def feeds_gone(user_id: str, table_id: str) -> str:
    """String: the table was told the user left (their last feed of it closed)."""
    return f"{{u:{user_id}}}:gone:{table_id}"


def rate(limit: str, subject: str) -> str:
    """Sorted set (a sliding window's log) or hash (a token bucket): one
    limit's count for one subject (services/kit/limits.py)."""
    return f"rl:{limit}:{subject}"


# -- matchmaking (see gateway/matchmaking/queues.py) -------------------------------

MM_QUEUES, MM_SPECS = "{mm}:queues", "{mm}:specs"  # the queues matchers visit, and their specs
MM_NOTICES = "mm:notices"  # pub/sub channel: ids of tickets just closed (gateway/matchmaking/notices.py)


def mm_queue(queue_hash: str, name: str) -> str:
    """A queue's key ``name`` (waiting, alive, forming, plans, waits, lease)."""
    return f"{{mm:{queue_hash}}}:{name}"


def mm_ticket(ticket_id: str) -> str:
    """Hash: a ticket; its id starts with its queue's hash, so it shares the tag."""
    return f"{{mm:{ticket_id[:16]}}}:t:{ticket_id}"


def mm_player(user_id: str) -> str:
    """String: the player's one live ticket."""
    return f"mm:player:{user_id}"


def mm_party(code: str) -> str:
    """String: a party code → the party's ticket."""
    return f"mm:party:{code}"


# -- ratings and histories: each player's keys share the player's hash tag,
# so recording one player's part of a result is one atomic script.


def rated(match_id: str) -> str:
    """String: this match's result has been recorded."""
    return f"rated:{match_id}"


def rating_plan(match_id: str) -> str:
    """String: a result's rating changes, computed once and then applied."""
    return f"rating-plan:{match_id}"


def rating(game: str, mode: str, user_id: str) -> str:
    return f"{{u:{user_id}}}:rating:{game}:{mode}"


def rating_history(game: str, mode: str, user_id: str) -> str:
    return f"{{u:{user_id}}}:rating-history:{game}:{mode}"


def match_history(user_id: str) -> str:
    return f"{{u:{user_id}}}:matches"


def recorded(user_id: str) -> str:
    """Sorted set: the matches already in the player's history and rating."""
    return f"{{u:{user_id}}}:recorded"


def leaderboard(game: str, mode: str) -> str:
    return f"leaderboard:{game}:{mode}"
