"""Paging means one thing on every list: ``limit`` 0 is the list's default,
1 to its maximum is that many, anything else (or a negative ``offset``) is
refused with ``invalid_page``, on both faces alike."""

from __future__ import annotations

from services.core.errors import invalid


def page(offset: int, limit: int, *, default: int, maximum: int) -> tuple[int, int]:
    """``(offset, limit)`` with the default filled in; raises ``invalid_page``."""
    if offset < 0 or not 0 <= limit <= maximum:
        raise invalid("invalid_page", f"offset >= 0 and limit 0-{maximum} (0: {default})")
    return offset, limit or default
