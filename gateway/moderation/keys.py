"""Every Redis key moderation uses. The queue, the reports, the audit log
and the banned set share the hash tag ``{mod}`` (one Redis Cluster slot: a
report and its queue change in one transaction); mutes sit with the user's
keys. Moderation is low traffic: one slot carries it easily."""

from __future__ import annotations

BANS = "mod:bans"  # pub/sub: "<1|0> <user id>" for each ban and unban (bans.py)
BANNED = "{mod}:banned"  # set: banned user ids
OPEN = "{mod}:reports:open"  # sorted set: open (and taken) report ids by time
RESOLVED = "{mod}:reports:resolved"  # sorted set: resolved report ids by time
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
