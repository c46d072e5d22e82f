"""Every Redis key friends and chat use, named in one place.

A user's keys carry the user's hash tag ``{u:<user>}`` (as the feeds' keys
do), so one user's graph, feed and markers sit in one Redis Cluster slot; a
write that touches two users (a friendship) is two slots, written with one
pipeline per side. Histories are streams trimmed to a length (MAXLEN) and
given a lifetime (EXPIRE) on every write."""

from __future__ import annotations

BLOCKS = "social:blocks"  # pub/sub: each block and unblock, for every replica's open feeds (sights.py)


def _user(user_id: str) -> str:
    return f"{{u:{user_id}}}"


def friends(user_id: str) -> str:
    """Hash: friend id -> since (Unix seconds)."""
    return f"{_user(user_id)}:friends"


def requests_in(user_id: str) -> str:
    """Hash: who asked the user to be friends -> when."""
    return f"{_user(user_id)}:freq:in"


def requests_out(user_id: str) -> str:
    """Hash: whom the user asked -> when."""
    return f"{_user(user_id)}:freq:out"


def blocked(user_id: str) -> str:
    """Set: the users this user blocked."""
    return f"{_user(user_id)}:blocked"


def social_feed(user_id: str) -> str:
    """Stream: the user's SocialEvents (serialized), MAXLEN and EXPIRE."""
    return f"{_user(user_id)}:social"


def social_live(user_id: str) -> str:
    """(Sharded) pub/sub channel: ``<entry id> <serialized SocialEvent>``
    for each event written to the user's feed."""
    return f"{_user(user_id)}:social:live"


def user_of_live(channel: str) -> str:
    return channel.removeprefix("{u:").split("}", 1)[0]


def at_table(user_id: str) -> str:
    """String with a short lifetime: the table the user's latest seated
    feed follows, refreshed while it is open (presence)."""
    return f"{_user(user_id)}:at-table"


def conversation(a: str, b: str) -> str:
    """Stream: the private messages between two users (either order)."""
    low, high = sorted((a, b))
    return f"chat:dm:{low}:{high}"


def table_chat(table_id: str, channel: str) -> str:
    """Stream: a table's chat channel (``players`` or ``spectators``)."""
    return f"chat:t:{table_id}:{channel}"
