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
