"""``python -m services.core.migrate``: move data written by an earlier
release to the keys this one reads (``keys.py``), so that no table, match or
history is lost by an upgrade. Idempotent: keys already in this release's
layout are left as they are, so running it twice, or on a fresh Redis, does
nothing.

What it moves:

- A table and its match shared one hash (``{gNN}:m:ID``: the match's ``v``,
  ``w``, ``doc``; the table's ``tv``, ``table``; the history's ``e``,
  ``over``, ``once``) and one stream (``{gNN}:m:ID:ev``). Now the table, the
  match and the history's head are three hashes (``{gNN}:t:ID``,
  ``{gNN}:m:ID``, ``{gNN}:h:ID``) and the stream is ``{gNN}:h:ID:ev``. Each
  table moves in one script (its keys share a slot), keeping its lifetime.
- The open-table lists were sets (``open-tables:<game>``); now sorted sets
  by creation time (``open-tables-by-age:<game>``), scored from each table's
  record.

Run it with the platform stopped (scaled to zero): the earlier release's
replicas would go on writing the old layout.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

import orjson

from services.core import keys
from services.core.settings import CommonSettings
from services.core.store import RedisClient, connect

# KEYS: the old shared hash, the old stream, the table, the history head,
# the new stream. Moves what the old hash holds for the table and the
# history, keeps the match's own fields, and the old lifetime on every key.
_MOVE = """
local old = redis.call('HGETALL', KEYS[1])
local fields = {}
for i = 1, #old, 2 do fields[old[i]] = old[i + 1] end
if fields['tv'] == nil and fields['e'] == nil then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if fields['table'] ~= nil then
  redis.call('HSET', KEYS[3], 'v', fields['tv'] or '0', 'doc', fields['table'])
end
local head = {}
for _, name in ipairs({'e', 'over', 'once'}) do
  if fields[name] ~= nil then
    table.insert(head, name)
    table.insert(head, fields[name])
  end
end
if #head > 0 then redis.call('HSET', KEYS[4], unpack(head)) end
redis.call('HDEL', KEYS[1], 'tv', 'table', 'e', 'over', 'once')
if fields['doc'] == nil then redis.call('DEL', KEYS[1]) end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('RENAME', KEYS[2], KEYS[5]) end
if ttl > 0 then
  for i = 1, 5 do redis.call('PEXPIRE', KEYS[i], ttl) end
end
return 1
"""


def _old_events(table_id: str) -> str:
    return f"{keys.match(table_id)}:ev"


async def _hashes(redis: RedisClient, pattern: str) -> list[str]:
    found = []
    async for raw in redis.scan_iter(match=pattern, count=1000, _type="HASH"):
        found.append(raw.decode() if isinstance(raw, bytes) else raw)
    return found


async def move_tables(redis: RedisClient) -> int:
    """Split every old shared hash into this release's keys; how many moved."""
    move = redis.register_script(_MOVE)
    moved = 0
    for key in await _hashes(redis, "{g*}:m:*"):
        table_id = key.split(":m:", 1)[1]
        if keys.match(table_id) != key:
            continue  # not a match hash of ours
        names = [
            key,
            _old_events(table_id),
            keys.table(table_id),
            keys.history(table_id),
            keys.events(table_id),
        ]
        moved += int(cast(Any, await move(keys=names)))
    return moved


async def move_open_tables(redis: RedisClient) -> int:
    """The old open-table sets as sorted sets by creation time; how many tables."""
    moved = 0
    async for raw in redis.scan_iter(match="open-tables:*", count=1000, _type="SET"):
        old = raw.decode() if isinstance(raw, bytes) else raw
        game = old.removeprefix("open-tables:")
        for member in cast(set[Any], await redis.smembers(old)):
            table_id = member.decode() if isinstance(member, bytes) else member
            doc = await redis.hget(keys.table(table_id), "doc")
            if doc is not None:
                created = float(orjson.loads(doc).get("created_at", 0))
                await redis.zadd(keys.open_tables(game), {table_id: created}, nx=True)
                moved += 1
        await redis.delete(old)
    return moved


async def migrate(redis: RedisClient) -> tuple[int, int]:
    return await move_tables(redis), await move_open_tables(redis)


async def _main() -> None:
    settings = CommonSettings()
    redis = connect(settings.redis_url, settings.redis_cluster, timeout=settings.redis_timeout_seconds)
    try:
        tables, listed = await migrate(redis)
    finally:
        await redis.aclose()
    print(f"moved {tables} tables to their own keys and {listed} open tables to the lists by age")


if __name__ == "__main__":
    asyncio.run(_main())
