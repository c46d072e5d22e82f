"""The upgrade of an earlier release's data (services/core/migrate.py) on a
real Redis: a table and its match written the old way (one shared hash, the
stream beside it) and an old open-table set are read by this release's store
as they were, the history goes on from its last event id, lifetimes are
kept, and a second run changes nothing."""

from __future__ import annotations

import secrets

import orjson

from services.core import keys
from services.core.migrate import migrate
from services.core.store import RecordStore
from tests.conftest import STORE_TTL_SECONDS
from tests.stored import stored


async def old_layout(store: RecordStore, table_id: str, *, with_match: bool) -> None:
    """What the earlier release wrote for a table (and, started, its match)."""
    shared = keys.match(table_id)
    fields: dict[str, bytes | str | int] = {
        "tv": 2,
        "table": orjson.dumps({"id": table_id, "status": "playing", "created_at": 1700000000.5}),
        "e": 3,
        "once": "deadline:1",
    }
    if with_match:
        fields |= {"v": 1, "w": "abc123", "doc": orjson.dumps({"game": "nim", "turn": 0})}
    await store.redis.hset(shared, mapping=fields)
    for n in (1, 2, 3):
        await store.redis.xadd(f"{shared}:ev", {"d": f"event {n}"}, id=f"0-{n}")
    await store.redis.expire(shared, 5000)
    await store.redis.expire(f"{shared}:ev", 5000)


async def test_a_started_table_moves_to_its_own_keys_and_its_history_goes_on(store: RecordStore) -> None:
    table_id = secrets.token_hex(6)
    await old_layout(store, table_id, with_match=True)
    tables = RecordStore(store.redis, keys.table, STORE_TTL_SECONDS, store.publish)

    moved, _ = await migrate(store.redis)

    assert moved >= 1
    table, match = await tables.load(table_id), await store.load(table_id)
    assert table is not None and match is not None
    assert (table.version, table.doc["status"], table.last_event_id) == (2, "playing", 3)
    assert (match.version, match.doc, match.token, match.last_event_id) == (
        1,
        {"game": "nim", "turn": 0},
        "abc123",
        3,
    )
    assert await store.read_events(table_id, 0) == [(1, b"event 1"), (2, b"event 2"), (3, b"event 3")]
    assert await store.redis.exists(f"{keys.match(table_id)}:ev") == 0
    assert set(await store.redis.hkeys(keys.match(table_id))) == {b"v", b"w", b"doc"}
    for key in (keys.table(table_id), keys.match(table_id), keys.history(table_id), keys.events(table_id)):
        assert 4000 < await store.redis.ttl(key) <= 5000, key
    # The once-key came along: the same deadline is not told twice.
    assert await store.append(table_id, [b"inactive"], b"", once="deadline:1") == 3
    written = await store.commit(table_id, 1, {"game": "nim", "turn": 1}, [b"move"], expected_token="abc123")
    assert (written.version, written.last_event_id) == (2, 4)

    before = await stored(store.redis, table_id)
    assert await migrate(store.redis) == (0, 0)  # idempotent
    assert await stored(store.redis, table_id) == before


async def test_a_table_not_yet_started_leaves_no_match_behind_and_stays_listed(store: RecordStore) -> None:
    table_id = secrets.token_hex(6)
    await old_layout(store, table_id, with_match=False)
    await store.redis.sadd("open-tables:nim", table_id)

    _, listed = await migrate(store.redis)

    assert listed >= 1
    assert await store.redis.exists(keys.match(table_id)) == 0
    assert await store.redis.exists("open-tables:nim") == 0
    assert await store.redis.zscore(keys.open_tables("nim"), table_id) == 1700000000.5
    tables = RecordStore(store.redis, keys.table, STORE_TTL_SECONDS, store.publish)
    table = await tables.load(table_id)
    assert table is not None and (table.version, table.last_event_id) == (2, 3)
