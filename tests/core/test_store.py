"""The record store on a real Redis: the compare-and-set write, the history's
event ids, notices (once, never after the end), live messages, a table and
its match in their own keys sharing one history, the clocks and results."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson
import pytest
from redis.asyncio.client import PubSub

from services.core import keys
from services.core.store import RecordStore, Track, VersionConflict, parse_live
from tests.conftest import STORE_TTL_SECONDS
from tests.stored import stored


@pytest.fixture
def match_id() -> str:
    return secrets.token_hex(6)


def doc(turn: int) -> dict[str, Any]:
    return {"game": "nim", "turn": turn}


async def events_of(store: RecordStore, match_id: str) -> list[tuple[int, bytes]]:
    return await store.read_events(match_id, 0)


async def test_a_commit_at_the_current_version_stores_the_record_and_appends_the_events(
    store: RecordStore, match_id: str
) -> None:
    created = await store.commit(match_id, 0, doc(0), [b"a", b"b"])
    moved = await store.commit(match_id, 1, doc(1), [b"c"])
    assert (created.version, created.last_event_id) == (1, 2)
    assert (moved.version, moved.last_event_id) == (2, 3)
    loaded = await store.load(match_id)
    assert loaded is not None
    assert (loaded.version, loaded.last_event_id, loaded.doc) == (2, 3, doc(1))
    assert await events_of(store, match_id) == [(1, b"a"), (2, b"b"), (3, b"c")]


@pytest.mark.parametrize("expected", [0, 1, 3])
async def test_a_commit_at_another_version_raises_and_writes_nothing(
    store: RecordStore, match_id: str, expected: int
) -> None:
    await store.commit(match_id, 0, doc(0), [b"a"])
    await store.commit(match_id, 1, doc(1), [b"b"])
    before = await stored(store.redis, match_id)
    with pytest.raises(VersionConflict) as conflict:
        await store.commit(match_id, expected, doc(99), [b"lost"], over=True)
    assert conflict.value.current_version == 2
    assert await stored(store.redis, match_id) == before


async def test_event_ids_run_on_without_gaps_across_writes_and_notices(
    store: RecordStore, match_id: str
) -> None:
    await store.commit(match_id, 0, doc(0), [b"1", b"2"])
    assert await store.append(match_id, [b"3"], b"") == 3
    await store.commit(match_id, 1, doc(1), [])  # a write may have no events
    written = await store.commit(match_id, 2, doc(2), [b"4", b"5"])
    assert await store.append(match_id, [b"6", b"7"], b"") == 7
    assert written.last_event_id == 5
    assert await events_of(store, match_id) == [(n, str(n).encode()) for n in range(1, 8)]
    assert await store.read_events(match_id, 5) == [(6, b"6"), (7, b"7")]
    assert await store.read_events(match_id, 7) == []


async def test_after_the_final_write_no_notice_is_appended(store: RecordStore, match_id: str) -> None:
    await store.commit(match_id, 0, doc(0), [b"move"])
    await store.commit(match_id, 1, doc(1), [b"final"], over=True)
    before = await stored(store.redis, match_id)
    assert await store.append(match_id, [b"late notice"], b"") is None
    assert await store.append(match_id, [b"late notice"], b"", once="deadline:2") is None
    assert await stored(store.redis, match_id) == before


async def test_a_notice_with_a_once_key_is_appended_once(store: RecordStore, match_id: str) -> None:
    await store.commit(match_id, 0, doc(0), [b"start"])
    assert await store.append(match_id, [b"inactive"], b"", once="deadline:1") == 2
    assert await store.append(match_id, [b"inactive"], b"", once="deadline:1") == 2
    assert await store.append(match_id, [b"inactive again"], b"", once="deadline:2") == 3
    assert await events_of(store, match_id) == [(1, b"start"), (2, b"inactive"), (3, b"inactive again")]
    assert (await store.redis.hget(keys.match(match_id), "v")) == b"1"  # notices keep the version


async def test_a_notice_for_a_match_that_does_not_exist_creates_nothing(
    store: RecordStore, match_id: str
) -> None:
    assert await store.append(match_id, [b"notice"], b"", once="deadline:1") is None
    assert await store.redis.exists(keys.match(match_id), keys.history(match_id), keys.events(match_id)) == 0


async def test_loading_a_match_that_does_not_exist_gives_none(store: RecordStore, match_id: str) -> None:
    assert await store.load(match_id) is None


async def test_a_table_and_its_match_are_their_own_keys_and_share_one_history(
    store: RecordStore, match_id: str
) -> None:
    tables = RecordStore(store.redis, keys.table, STORE_TTL_SECONDS, store.publish)
    opened = await tables.commit(match_id, 0, {"status": "open"}, [b"opened"])
    await tables.commit(match_id, 1, {"status": "playing"}, [b"started"], expected_token=opened.token)
    assert await store.load(match_id) is None  # no match yet: only its table
    await store.commit(match_id, 0, doc(0), [b"dealt"])
    table, match = await tables.load(match_id), await store.load(match_id)
    assert table is not None and match is not None
    assert (table.version, table.doc) == (2, {"status": "playing"})
    assert (match.version, match.doc) == (1, doc(0))
    assert table.last_event_id == match.last_event_id == 3
    assert await events_of(store, match_id) == [(1, b"opened"), (2, b"started"), (3, b"dealt")]
    # Each record in its own hash: the match's write left the table's alone.
    assert orjson.loads(await store.redis.hget(keys.table(match_id), "doc")) == {"status": "playing"}
    assert set(await store.redis.hkeys(keys.match(match_id))) == {b"v", b"w", b"doc"}
    assert set(await store.redis.hkeys(keys.table(match_id))) == {b"v", b"w", b"doc"}


async def test_every_write_renews_the_ttl_of_the_records_and_history(
    store: RecordStore, match_id: str
) -> None:
    tables = RecordStore(store.redis, keys.table, STORE_TTL_SECONDS, store.publish)
    await tables.commit(match_id, 0, {"status": "playing"}, [b"started"])
    await store.commit(match_id, 0, doc(0), [b"a"])
    table_keys = (keys.table(match_id), keys.match(match_id), keys.history(match_id), keys.events(match_id))
    for key in table_keys:
        assert STORE_TTL_SECONDS - 5 <= await store.redis.ttl(key) <= STORE_TTL_SECONDS
        await store.redis.expire(key, 10)
    # A move keeps the table's record alive too: it is read when the match ends.
    await store.commit(match_id, 1, doc(1), [b"b"])
    for key in table_keys:
        assert await store.redis.ttl(key) > 10


@asynccontextmanager
async def listening(store: RecordStore, match_id: str, sharded: bool = False) -> AsyncIterator[PubSub]:
    """Subscribed to the match's live channel (its subscription confirmed)."""
    pubsub = store.redis.pubsub()
    channel = keys.live(match_id)
    await (pubsub.ssubscribe(channel) if sharded else pubsub.subscribe(channel))
    try:
        confirmed = await pubsub.get_message(timeout=2)
        assert confirmed is not None and confirmed["type"] in ("subscribe", "ssubscribe"), confirmed
        yield pubsub
    finally:
        await pubsub.aclose()


async def heard(pubsub: PubSub) -> tuple[int, bytes]:
    message = await pubsub.get_message(timeout=2)
    assert message is not None, "no live message"
    return parse_live(message["data"])


@pytest.mark.parametrize("command", ["PUBLISH", "SPUBLISH"])
async def test_writes_and_notices_are_published_with_their_first_event_id(
    store: RecordStore, match_id: str, command: str
) -> None:
    publisher = RecordStore(store.redis, keys.match, STORE_TTL_SECONDS, command)
    async with listening(store, match_id, sharded=command == "SPUBLISH") as pubsub:
        await publisher.commit(match_id, 0, doc(0), [b"1", b"2"], b"first")
        written = await publisher.commit(match_id, 1, doc(1), [b"3"], b"second")
        await publisher.commit(match_id, 2, doc(2), [], b"without events")
        await publisher.append(match_id, [b"4"], b"notice")
        # A write without events is published too: its version's snapshots
        # must reach the feeds (Nim's setup says nothing, yet the seats must
        # see the match start); it names the id its next event will have.
        assert [await heard(pubsub) for _ in range(4)] == [
            (1, b"first"),
            (3, b"second"),
            (4, b"without events"),
            (4, b"notice"),
        ]
        assert written.listeners == 1
        assert await pubsub.get_message(timeout=0.2) is None


async def test_a_store_without_a_publish_command_writes_without_live_messages(
    store: RecordStore, match_id: str
) -> None:
    quiet = RecordStore(store.redis, keys.match, STORE_TTL_SECONDS, "")
    async with listening(store, match_id) as pubsub:
        written = await quiet.commit(match_id, 0, doc(0), [b"1"], b"live")
        assert written.listeners == 0
        assert await pubsub.get_message(timeout=0.2) is None


async def test_a_write_files_its_deadline_or_its_result_in_the_same_script(
    store: RecordStore, match_id: str
) -> None:
    game = f"game-{match_id}"
    group = keys.group(match_id)
    clocks, results = keys.clocks(game, group), keys.results(group)
    await store.commit(match_id, 0, doc(0), [b"a"], track=Track(game, due=100.0))
    await store.commit(match_id, 1, doc(1), [b"b"], track=Track(game, due=200.0))
    assert await store.redis.zrange(clocks, 0, -1, withscores=True) == [(f"{match_id}:2".encode(), 200.0)]
    assert await store.count_active(game) == 1
    await store.commit(match_id, 2, doc(2), [b"c"], track=Track(game))  # nobody to act: no deadline
    assert await store.redis.zcard(clocks) == 0
    # A write that loses the race files nothing.
    with pytest.raises(VersionConflict):
        await store.commit(match_id, 1, doc(9), [b"lost"], track=Track(game, due=300.0))
    assert await store.redis.zcard(clocks) == 0
    before = await store.redis.xlen(results)
    await store.commit(match_id, 3, doc(3), [b"d"], over=True, track=Track(game, result={"ranks": [1, 2]}))
    assert await store.count_active(game) == 0
    (_, last), *_ = await store.redis.xrevrange(results, count=1)
    assert await store.redis.xlen(results) == before + 1
    assert last[b"match"] == match_id.encode() and orjson.loads(last[b"result"]) == {"ranks": [1, 2]}


async def test_a_write_from_a_kept_record_needs_the_token_of_the_write_that_made_it(
    store: RecordStore, match_id: str
) -> None:
    created = await store.commit(match_id, 0, doc(0), [b"a"])
    loaded = await store.load(match_id)
    assert loaded is not None and loaded.token == created.token != ""
    # The same version written again by someone else (as after a failover
    # that lost a write): a writer holding the old record is refused.
    await store.redis.hset(keys.match(match_id), "w", "another-write")
    before = await stored(store.redis, match_id)
    with pytest.raises(VersionConflict) as conflict:
        await store.commit(match_id, 1, doc(1), [b"b"], expected_token=created.token)
    assert conflict.value.current_version == 1
    assert await stored(store.redis, match_id) == before
    moved = await store.commit(match_id, 1, doc(1), [b"b"], expected_token="another-write")
    assert moved.version == 2 and moved.token not in (created.token, "another-write")


async def test_of_two_writers_at_one_version_exactly_one_wins(store: RecordStore, match_id: str) -> None:
    await store.commit(match_id, 0, doc(0), [b"start"])
    results = await asyncio.gather(
        *(store.commit(match_id, 1, doc(n), [f"move {n}".encode()]) for n in range(8)),
        return_exceptions=True,
    )
    won = [r for r in results if not isinstance(r, BaseException)]
    assert len(won) == 1 and all(isinstance(r, VersionConflict) for r in results if r not in won)
    assert len(await events_of(store, match_id)) == 2
