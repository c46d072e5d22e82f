"""Every Redis key and channel Rodada uses, named in one place.

Tables are spread over ``GROUPS`` slot groups by their id: a table's keys,
its match's (the table id is the match id), their history's and the group's
clock, leases, active set and results stream all carry the group's hash tag
``{g<NN>}``, so they live in one Redis Cluster slot and the one script that
commits a move also files its deadline and, at the end, its result. Readers
of the per-group keys (the gateway's clocks and results, the active gauge)
visit every group.

A user's keys carry the user's hash tag ``{u:<user>}``, so one user's
graph, feed, markers, ratings and history sit in one slot (a write that
touches two users, a friendship, is two slots, written with one pipeline
per side). A matchmaking queue's keys share ``{mm:<queue>}``, a league's
``{lg:<game>:<mode>}``, moderation's ``{mod}``. Keys without a tag are
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


# -- a table: its records and its history ----------------------------------------


def table(table_id: str) -> str:
    """Hash: the table's record (the lobby): ``v`` version, ``w`` the
    write's token, ``doc`` the record. Written by the gateway only."""
    return f"{_tag(group(table_id))}:t:{table_id}"


def match(match_id: str) -> str:
    """Hash: the match's record (its id is its table's): ``v`` version,
    ``w`` the write's token, ``doc`` the record. Written by the game
    service only."""
    return f"{_tag(group(match_id))}:m:{match_id}"


def history(table_id: str) -> str:
    """Hash: the head of the table's history (``e`` last event id, ``over``,
    ``once``), written with the events by services/core/store.py only."""
    return f"{_tag(group(table_id))}:h:{table_id}"


def events(table_id: str) -> str:
    """Stream: the table's and its match's history, entry ``0-N`` = event N;
    appended by services/core/store.py only (moderation may delete a
    removed chat message's entry)."""
    return f"{history(table_id)}:ev"


def live(table_id: str) -> str:
    """(Sharded) pub/sub channel: each write's new events, and snapshots
    while someone watches."""
    return f"{history(table_id)}:live"


def match_of_live(channel: str) -> str:
    """The table (and match) a live channel belongs to."""
    return channel.split(":h:", 1)[1].removesuffix(":live")


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
    limit's count for one subject (services/core/limits.py)."""
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


# -- friends, blocks, the social feed and chat (gateway/social/) --------------------

BLOCKS = "social:blocks"  # pub/sub: each block and unblock, for every replica's open feeds (sights.py)


def friends(user_id: str) -> str:
    """Hash: friend id -> since (Unix seconds)."""
    return f"{{u:{user_id}}}:friends"


def requests_in(user_id: str) -> str:
    """Hash: who asked the user to be friends -> when."""
    return f"{{u:{user_id}}}:freq:in"


def requests_out(user_id: str) -> str:
    """Hash: whom the user asked -> when."""
    return f"{{u:{user_id}}}:freq:out"


def blocked(user_id: str) -> str:
    """Set: the users this user blocked."""
    return f"{{u:{user_id}}}:blocked"


def social_feed(user_id: str) -> str:
    """Stream: the user's SocialEvents (serialized), MAXLEN and EXPIRE."""
    return f"{{u:{user_id}}}:social"


def social_live(user_id: str) -> str:
    """(Sharded) pub/sub channel: ``<entry id> <serialized SocialEvent>``
    for each event written to the user's feed."""
    return f"{{u:{user_id}}}:social:live"


def user_of_live(channel: str) -> str:
    return channel.removeprefix("{u:").split("}", 1)[0]


def at_table(user_id: str) -> str:
    """String with a short lifetime: the table the user's latest seated
    feed follows, refreshed while it is open (presence)."""
    return f"{{u:{user_id}}}:at-table"


def conversation(a: str, b: str) -> str:
    """Stream: the private messages between two users (either order)."""
    low, high = sorted((a, b))
    return f"chat:dm:{low}:{high}"


def table_chat(table_id: str, channel: str) -> str:
    """Stream: a table's chat channel (``players`` or ``spectators``)."""
    return f"chat:t:{table_id}:{channel}"


# -- competitions: trophies, tournaments, leagues (gateway/competitions/) ------------
# A tournament's record is one key, changed only by compare-and-set on its version.


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


# -- moderation (gateway/moderation/): the queue, the reports, the audit log and the
# banned set share ``{mod}`` (a report and its queue change in one transaction);
# mutes sit with the user's keys. Low traffic: one slot carries it easily.

BANS = "mod:bans"  # pub/sub: "<1|0> <user id>" for each ban and unban (bans.py)
BANNED = "{mod}:banned"  # set: banned user ids
REPORTS_OPEN = "{mod}:reports:open"  # sorted set: open (and taken) report ids by time
REPORTS_RESOLVED = "{mod}:reports:resolved"  # sorted set: resolved report ids by time
AUDIT = "{mod}:audit"  # stream: every moderator action


def report(report_id: str) -> str:
    """Hash: one report."""
    return f"{{mod}}:report:{report_id}"


def reported(reporter: str, message: str) -> str:
    """String: the report ``reporter`` made of ``message`` (one each)."""
    return f"{{mod}}:reported:{reporter}:{message}"


def muted(user_id: str) -> str:
    """String with a lifetime: the user is muted until it expires (its value)."""
    return f"{{u:{user_id}}}:muted"
