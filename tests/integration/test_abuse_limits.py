"""Abuse limits of issue 25, on a stack of their own with tight limits: the
chat's sliding window (no window of the limit's length holds more than the
limit, across any edge), token buckets for friend requests, table invites and
reports (429 with Retry-After on HTTP, RESOURCE_EXHAUSTED on gRPC; a refused
request changes nothing), the cap on open tables per user and the paged
listing of open tables, and names: guests marked wherever a name is shown,
staff-like names and account names refused to guests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import grpc
import httpx
import pytest
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc, social_pb2, social_pb2_grpc

from services.core.errors import error_reason
from tests.integration.grpc_client import bearer
from tests.integration.http_client import ApiRefused, Player, guest, register
from tests.integration.social_client import SocialFeed, lobby_feed, next_chat
from tools.stack import Stack

CHAT = (5, 2)  # 5 messages in any 2 s


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    env = {
        "CHAT_LIMIT": f"{CHAT[0]}/{CHAT[1]}",
        "FRIEND_REQUEST_LIMIT": "3/60",
        "TABLE_INVITE_LIMIT": "2/60",
        "REPORT_LIMIT": "2/60",
        "OPEN_TABLES_PER_USER": "2",
    }
    with Stack(tmp_path_factory.mktemp("limited"), env=env, games=["domino", "yatzy"]) as stack:
        stack.gateway()
        yield stack


@pytest.fixture
async def http(limited: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=limited.gateway(), timeout=15) as client:
        yield client


async def refused(call: object) -> ApiRefused:
    try:
        await call  # type: ignore[misc]
    except ApiRefused as refusal:
        return refusal
    raise AssertionError("accepted")


async def limited_429(player: Player, method: str, path: str, body: object = None) -> int:
    """The call is refused as rate-limited; its Retry-After."""
    response = await player.http.request(method, path, json=body, headers=player.headers)
    assert response.status_code == 429, response.text
    assert response.json()["error"]["code"] == "rate_limited"
    return int(response.headers["retry-after"])


async def befriend(a: Player, b: Player) -> None:
    await a.call("POST", "/v1/social/friends/requests", {"user_id": b.user_id})
    await b.call("POST", f"/v1/social/friends/{a.user_id}/accept")


# -- chat: a sliding window ------------------------------------------------------------


async def test_no_window_of_the_chat_limits_length_holds_more_than_the_limit(http: httpx.AsyncClient) -> None:
    """Fixed windows let twice the limit through across an edge: 5 at the end
    of one window, 5 at the start of the next. Start half-way into a fixed
    window (as the old counter aligned them) and keep sending for longer
    than a window: no 2 s span may hold more than 5 accepted messages."""
    count, seconds = CHAT
    ana = await register(http, "chatty")
    table = await ana.create_table("yatzy", 2)
    path = f"/v1/tables/{table['id']}/chat"
    await asyncio.sleep(seconds - time.time() % seconds + seconds / 2)
    accepted: list[float] = []
    waits: list[int] = []
    stop = time.monotonic() + seconds * 2.5
    while time.monotonic() < stop:
        sent = time.monotonic()
        response = await http.post(path, json={"text": "oi"}, headers=ana.headers)
        if response.status_code == 201:
            accepted.append(sent)
        else:
            assert response.status_code == 429 and response.json()["error"]["code"] == "rate_limited"
            waits.append(int(response.headers["retry-after"]))
        await asyncio.sleep(0.05)
    assert waits and all(1 <= w <= seconds for w in waits)
    assert len(accepted) >= 2 * count  # it recovers: the limit is a rate, not a ban
    for i, start in enumerate(accepted):
        # Sent within the span of one window (the client's clock: latency allowed for).
        within = [t for t in accepted[i:] if t - start < seconds - 0.15]
        assert len(within) <= count, f"{len(within)} messages in {seconds} s"
    history = await ana.call("GET", path)
    assert len(history["messages"]) == len(accepted)  # refused ones were not kept


# -- token buckets -----------------------------------------------------------------------


async def test_friend_requests_are_a_bucket_and_a_refusal_writes_nothing(
    http: httpx.AsyncClient, limited: Stack
) -> None:
    """Request and withdraw in a loop: 3 go through, then 429 (and
    RESOURCE_EXHAUSTED over gRPC); the target's feed holds only those 3."""
    eve, bia = await register(http, "eve"), await register(http, "bia")
    for _ in range(3):
        await eve.call("POST", "/v1/social/friends/requests", {"user_id": bia.user_id})
        await eve.call("POST", f"/v1/social/friends/{bia.user_id}/decline")
    wait = await limited_429(eve, "POST", "/v1/social/friends/requests", {"user_id": bia.user_id})
    assert 1 <= wait <= 20  # one token per 20 s
    async with grpc.aio.insecure_channel(limited.platform_grpc()) as channel:
        social = social_pb2_grpc.SocialServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as exhausted:
            await social.RequestFriend(
                social_pb2.RequestFriendRequest(user_id=bia.user_id), metadata=bearer(eve.token)
            )
        assert exhausted.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert error_reason(exhausted.value) == "rate_limited"
    listed = await bia.call("GET", "/v1/social/friends")
    assert listed["incoming"] == []  # the refused requests were not written

    def requested(events: list[dict[str, object]]) -> int:
        return sum(1 for e in events if e.get("friend", {}).get("kind") == "FRIEND_NOTICE_KIND_REQUESTED")  # type: ignore[union-attr]

    async with SocialFeed(limited.gateway(), bia.token) as feed:  # from the start of Bia's feed
        await feed.until(lambda _: requested(feed.events) >= 3)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(feed.socket.recv(), 0.5)  # nothing more
        assert requested(feed.events) == 3


async def test_table_invites_to_friends_are_a_bucket(http: httpx.AsyncClient) -> None:
    ana, bia = await register(http, "host"), await register(http, "friend")
    await befriend(ana, bia)
    table = await ana.create_table("domino", 4)
    body = {"table_id": table["id"]}
    for _ in range(2):
        await ana.call("POST", f"/v1/social/friends/{bia.user_id}/invite", body)
    assert 1 <= await limited_429(ana, "POST", f"/v1/social/friends/{bia.user_id}/invite", body) <= 30


async def test_reports_are_a_bucket(http: httpx.AsyncClient) -> None:
    ana, bia = await register(http, "loud"), await register(http, "reporter")
    table = await ana.create_table("yatzy", 2)
    await bia.join(table["invite_code"])
    said = [await ana.call("POST", f"/v1/tables/{table['id']}/chat", {"text": f"msg {i}"}) for i in range(3)]
    report = {"channel": "CHAT_CHANNEL_TABLE_PLAYERS", "table_id": table["id"], "reason": "rude"}
    for message in said[:2]:
        await bia.call("POST", "/v1/social/reports", {**report, "message_id": message["id"]})
    assert await limited_429(bia, "POST", "/v1/social/reports", {**report, "message_id": said[2]["id"]}) >= 1


# -- open tables -------------------------------------------------------------------------


async def test_open_tables_are_capped_per_user_and_listed_a_page_at_a_time(
    http: httpx.AsyncClient, limited: Stack
) -> None:
    ana, bia = await register(http, "opener"), await register(http, "other")
    first = await ana.create_table("domino", 4)
    second = await ana.create_table("domino", 4)
    too_many = await refused(ana.create_table("domino", 4))
    assert (too_many.status, too_many.code) == (429, "too_many_tables")
    async with grpc.aio.insecure_channel(limited.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as exhausted:
            await api.CreateTable(
                platform_pb2.CreateTableRequest(game="yatzy", seats=1), metadata=bearer(ana.token)
            )
        assert exhausted.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert error_reason(exhausted.value) == "too_many_tables"
    # Leaving one (the host leaves: it is no longer theirs, or gone) frees a place.
    await ana.leave(first["id"])
    third = await ana.create_table("domino", 4)
    await bia.create_table("domino", 4)  # the cap is per user

    # A page at a time, oldest first, a cursor on: the abandoned table is
    # dropped on the way without shifting a page.
    listed, token, pages = [], "", 0
    while True:
        page = await bia.call("GET", f"/v1/tables?game=domino&page_size=1&page_token={token}")
        listed += [t["id"] for t in page["tables"]]
        pages += 1
        token = page["next_page_token"]
        if not token:
            break
        assert len(page["tables"]) == 1
    assert first["id"] not in listed and {second["id"], third["id"]} <= set(listed)
    assert len(listed) == len(set(listed)) and pages >= len(listed)
    everything = await bia.call("GET", "/v1/tables?game=domino")
    assert [t["id"] for t in everything["tables"]] == listed and everything["next_page_token"] == ""
    for query, code in (("page_size=101", "invalid_page"), ("page_token=nope", "invalid_page_token")):
        bad = await refused(bia.call("GET", f"/v1/tables?game=domino&{query}"))
        assert (bad.status, bad.code) == (422, code), query


# -- names -------------------------------------------------------------------------------


async def test_staff_names_and_account_names_are_refused(http: httpx.AsyncClient) -> None:
    taken = await register(http, "real")
    for name in ("Moderator", "ADMIN", "admin_ana", "Rodada", "the.rodada", "Mod", "Moder.ator", "SUPPORT-1"):
        response = await http.post("/v1/auth/register", json={"username": name, "password": "correct horse"})
        assert response.status_code == 422 and response.json()["error"]["code"] == "reserved_name", name
        response = await http.post("/v1/auth/guest", json={"name": name})
        assert response.status_code == 422 and response.json()["error"]["code"] == "reserved_name", name
    for name in (taken.name, taken.name.upper()):
        response = await http.post("/v1/auth/guest", json={"name": name})
        assert response.status_code == 409 and response.json()["error"]["code"] == "username_taken"
    for name in ("badminton", "modesto"):  # not staff names
        assert (await guest(http, name)).name == name


async def test_a_guest_is_marked_wherever_their_name_is_shown(
    http: httpx.AsyncClient, limited: Stack
) -> None:
    ana, gus = await register(http, "ana"), await guest(http, "gus")
    assert (await gus.call("GET", "/v1/me"))["guest"] is True
    assert (await ana.call("GET", "/v1/me"))["guest"] is False
    table = await ana.create_table("yatzy", 2)
    joined = await gus.join(table["invite_code"])
    assert [(p["name"], p["guest"]) for p in joined["players"]] == [(ana.name, False), ("gus", True)]
    feed = await lobby_feed(ana, limited.gateway(), table["id"])
    try:
        said = await gus.call("POST", f"/v1/tables/{table['id']}/chat", {"text": "oi"})
        assert said["sender_guest"] is True
        heard, _ = await next_chat(feed)
        assert (heard["sender_name"], heard["sender_guest"]) == ("gus", True)
    finally:
        await feed.__aexit__()
    snapshot = await ana.start(table["id"])
    assert [(s["display_name"], s["guest"]) for s in snapshot["seats"]] == [(ana.name, False), ("gus", True)]
