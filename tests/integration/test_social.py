"""Friends and chat over the real stack with two gateway replicas (issue 18):
two friends meet, chat privately, and sit at the same Dominó open table
opposite each other (the seed: "para jogar com um amigo, combinem pelo chat
privado e sentem na mesma mesa aberta"); the table's chat reaches its
players only, the spectators' chat its spectators only; abuse (flooding,
blocked users, oversized messages, HTML) is refused or made inert; both
faces (HTTP + WebSocket, gRPC)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from typing import Any

import grpc
import httpx
import pytest
from redis import Redis
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc, social_pb2, social_pb2_grpc

from services.core import keys
from tests.conftest import TEST_PACKAGES
from tests.integration.grpc_client import bearer, refusal, unpack
from tests.integration.http_client import ApiRefused, Player, register
from tests.integration.social_client import SocialFeed, lobby_feed, next_chat
from tools.stack import Stack

CHAT_LIMIT = 8  # per user, for the whole module (a window far longer than any test)
HTML = '<b>oi</b><script>alert("x")</script><img src=x onerror="alert(1)"> & &amp; \u00e9'


@pytest.fixture(scope="module")
def social_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    env = {"CHAT_LIMIT": f"{CHAT_LIMIT}/3600", "CHAT_MAX_LENGTH": "200", "CHAT_WORD_FILTER": "darn,heck"}
    with Stack(
        tmp_path_factory.mktemp("social"), env=env, packages=TEST_PACKAGES, games=["domino", "yatzy"]
    ) as stack:
        stack.gateway(0)
        stack.gateway(1)
        yield stack


@pytest.fixture
async def replicas(social_stack: Stack) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    async with (
        httpx.AsyncClient(base_url=social_stack.gateway(0), timeout=15) as one,
        httpx.AsyncClient(base_url=social_stack.gateway(1), timeout=15) as two,
    ):
        yield one, two


async def test_two_friends_chat_and_sit_opposite_at_a_domino_open_table(
    replicas: tuple[httpx.AsyncClient, httpx.AsyncClient], social_stack: Stack
) -> None:
    one, two = replicas
    base_one, base_two = social_stack.gateway(0), social_stack.gateway(1)
    ana = await register(one, "ana")  # Ana uses replica 0
    bia = await register(two, "bia")  # Bia replica 1
    async with SocialFeed(base_one, ana.token) as ana_social, SocialFeed(base_two, bia.token) as bia_social:
        # A request by username on one replica reaches Bia's feed on the other.
        asked = await ana.call("POST", "/v1/social/friends/requests", {"username": bia.name})
        assert asked == {"friends": False, "user_id": bia.user_id}
        notice = await bia_social.until(lambda e: "friend" in e)
        assert notice["friend"] == {
            "kind": "FRIEND_NOTICE_KIND_REQUESTED",
            "user_id": ana.user_id,
            "name": ana.name,
        }
        listed = await bia.call("GET", "/v1/social/friends")
        assert [r["user_id"] for r in listed["incoming"]] == [ana.user_id] and listed["friends"] == []
        friend = await bia.call("POST", f"/v1/social/friends/{ana.user_id}/accept")
        assert friend["user_id"] == ana.user_id and friend["online"]  # her social feed is open
        accepted = await ana_social.until(
            lambda e: e.get("friend", {}).get("kind") == "FRIEND_NOTICE_KIND_ACCEPTED"
        )
        assert accepted["friend"]["user_id"] == bia.user_id
        with pytest.raises(ApiRefused) as refused:  # accepted once: the request is gone
            await bia.call("POST", f"/v1/social/friends/{ana.user_id}/accept")
        assert (refused.value.status, refused.value.code) == (404, "request_not_found")

        # They arrange it privately.
        said = await ana.call("POST", f"/v1/social/messages/{bia.user_id}", {"text": "dominó? mesa aberta"})
        assert said["channel"] == "CHAT_CHANNEL_PRIVATE" and said["recipient_id"] == bia.user_id
        heard = await bia_social.until(lambda e: "message" in e)
        assert heard["message"] == said
        mine = await ana_social.until(lambda e: "message" in e)  # the sender's other devices too
        assert mine["message"]["id"] == said["id"]
        await bia.call("POST", f"/v1/social/messages/{ana.user_id}", {"text": "bora, senta que eu vou"})
        history = await ana.call("GET", f"/v1/social/messages/{bia.user_id}")
        assert [m["text"] for m in history["messages"]] == ["dominó? mesa aberta", "bora, senta que eu vou"]

        # Ana opens a Dominó table (open: no private tables) and follows it.
        table = await ana.create_table("domino", 4)
        table_id = table["id"]
        async with AsyncExitStack() as feeds:
            ana_feed = await lobby_feed(ana, base_one, table_id)
            feeds.push_async_callback(ana_feed.__aexit__)
            # Presence: Bia sees Ana online at that open table.
            listed = await bia.call("GET", "/v1/social/friends")
            (seen,) = listed["friends"]
            assert (
                seen["user_id"],
                seen["online"],
                seen["table_id"],
                seen["table_game"],
                seen["table_status"],
            ) == (
                ana.user_id,
                True,
                table_id,
                "domino",
                "open",
            )
            # The invite names the seat opposite Ana: her partner's.
            invite = await ana.call(
                "POST", f"/v1/social/friends/{bia.user_id}/invite", {"table_id": table_id}
            )
            assert invite["table_id"] == table_id and invite["seat"] == 2 and invite["invite_code"] == ""
            got = await bia_social.until(lambda e: "invite" in e)
            assert got["invite"] == invite
            sat = await bia.sit(table_id, got["invite"]["seat"])
            players = sat["table"]["players"]
            assert players[0]["user_id"] == ana.user_id and players[2]["user_id"] == bia.user_id
            assert [t["seats"] for t in sat["table"]["teams"] if t["name"] == "TEAM_0"] == [[0, 2]]

            bia_feed = await lobby_feed(bia, base_two, table_id)
            feeds.push_async_callback(bia_feed.__aexit__)
            caio = await register(one, "caio")  # a spectator on replica 0
            davi = await register(two, "davi")  # another on replica 1
            caio_feed = await lobby_feed(caio, base_one, table_id)
            feeds.push_async_callback(caio_feed.__aexit__)
            davi_feed = await lobby_feed(davi, base_two, table_id)
            feeds.push_async_callback(davi_feed.__aexit__)

            # In the lobby: spectators talk among themselves, players among theirs.
            spectator_said = await caio.call("POST", f"/v1/tables/{table_id}/chat", {"text": "joga a sena!"})
            assert spectator_said["channel"] == "CHAT_CHANNEL_TABLE_SPECTATORS"
            player_said = await ana.call(
                "POST", f"/v1/tables/{table_id}/chat", {"text": "boa sorte, parceira"}
            )
            assert player_said["channel"] == "CHAT_CHANNEL_TABLE_PLAYERS"
            # Feeds deliver in history order: Bia's next chat is Ana's, so she never got Caio's.
            assert (await next_chat(bia_feed))[0] == player_said
            assert (await next_chat(ana_feed))[0] == player_said  # her own, after Caio's was left out
            assert (await next_chat(davi_feed))[0] == spectator_said
            assert (await next_chat(caio_feed))[0] == spectator_said
            # ... and the spectators never get the players' (a later spectator line comes next).
            later = await davi.call("POST", f"/v1/tables/{table_id}/chat", {"text": "psiu"})
            assert (await next_chat(caio_feed))[0] == later
            assert (await next_chat(davi_feed))[0] == later

            # Two more sit; the last seat starts the match.
            eva, fabio = await register(one, "eva"), await register(two, "fabio")
            await eva.sit(table_id, 1)
            started = await fabio.sit(table_id, 3)
            assert started["table"]["status"] == "playing"
            seats = [s["user_id"] for s in started["match"]["seats"]]
            assert seats[0] == ana.user_id and seats[2] == bia.user_id  # partners, opposite

            # During play: the hub applies audiences (seats / spectators only).
            spectator_said = await davi.call(
                "POST", f"/v1/tables/{table_id}/chat", {"text": "ela tem a carroça"}
            )
            player_said = await bia.call("POST", f"/v1/tables/{table_id}/chat", {"text": "vamos lá"})
            chat, event = await next_chat(ana_feed)
            assert chat == player_said and event["audience"] == [0, 1, 2, 3]
            chat, event = await next_chat(caio_feed)
            assert chat == spectator_said and event["spectators_only"] is True
            spectators = await caio.call("GET", f"/v1/tables/{table_id}/chat")
            assert [m["text"] for m in spectators["messages"]] == [
                "joga a sena!",
                "psiu",
                "ela tem a carroça",
            ]
            players_chat = await ana.call("GET", f"/v1/tables/{table_id}/chat")
            assert [m["text"] for m in players_chat["messages"]] == ["boa sorte, parceira", "vamos lá"]


async def test_chat_abuse_is_refused_or_made_inert(
    replicas: tuple[httpx.AsyncClient, httpx.AsyncClient], social_stack: Stack
) -> None:
    one, two = replicas
    gil, hel = await register(one, "gil"), await register(two, "hel")
    await gil.call("POST", "/v1/social/friends/requests", {"user_id": hel.user_id})
    # Asking back accepts.
    assert (await hel.call("POST", "/v1/social/friends/requests", {"user_id": gil.user_id}))[
        "friends"
    ] is True

    async with SocialFeed(social_stack.gateway(1), hel.token) as hel_social:
        # HTML and script are data: stored, delivered and listed unchanged, as JSON strings.
        sent = await one.post(f"/v1/social/messages/{hel.user_id}", json={"text": HTML}, headers=gil.headers)
        assert sent.status_code == 201 and sent.headers["content-type"] == "application/json"
        # A JSON string inside a JSON body: the markup is characters, not a document.
        assert sent.json()["text"] == HTML and json.dumps(HTML, ensure_ascii=False)[1:-1] in sent.text
        heard = await hel_social.until(lambda e: "message" in e)
        assert heard["message"]["text"] == HTML
        listed = await hel.call("GET", f"/v1/social/messages/{gil.user_id}")
        assert [m["text"] for m in listed["messages"]] == [HTML]

    # The word filter masks whole words, any case.
    masked = await gil.call(
        "POST", f"/v1/social/messages/{hel.user_id}", {"text": "Darn it, what the HECK, darnit"}
    )
    assert masked["text"] == "**** it, what the ****, darnit"

    # Oversized and empty: refused, nothing kept.
    for text, code in (("x" * 201, "message_too_long"), ("   ", "empty_message")):
        with pytest.raises(ApiRefused) as refused:
            await gil.call("POST", f"/v1/social/messages/{hel.user_id}", {"text": text})
        assert (refused.value.status, refused.value.code) == (422, code)

    # Not Unicode (a lone surrogate, escaped in JSON): refused as a malformed body, not a crash.
    raw = await one.post(
        f"/v1/social/messages/{hel.user_id}",
        content=b'{"text": "oi \\ud800"}',
        headers={**gil.headers, "content-type": "application/json"},
    )
    assert (raw.status_code, raw.json()["error"]["code"]) == (422, "invalid_request")

    # Flooding: past CHAT_LIMIT messages, refused with Retry-After, nothing kept.
    refusals = []
    for n in range(CHAT_LIMIT + 3):
        response = await two.post(
            f"/v1/social/messages/{gil.user_id}", json={"text": f"spam {n}"}, headers=hel.headers
        )
        if response.status_code == 201:
            continue
        refusals.append(
            (response.status_code, response.json()["error"]["code"], response.headers.get("retry-after"))
        )
    assert len(refusals) == 3 and all(r[:2] == (429, "rate_limited") and r[2] for r in refusals)
    kept = await gil.call("GET", f"/v1/social/messages/{hel.user_id}?limit=200")
    assert [m["text"] for m in kept["messages"]][-CHAT_LIMIT:] == [f"spam {n}" for n in range(CHAT_LIMIT)]

    # A report is stored for the moderators with the message's text.
    spam = kept["messages"][-1]
    await gil.call(
        "POST",
        "/v1/social/reports",
        {
            "channel": "CHAT_CHANNEL_PRIVATE",
            "message_id": spam["id"],
            "user_id": hel.user_id,
            "reason": "spam",
        },
    )
    with pytest.raises(ApiRefused) as refused:
        await gil.call(
            "POST",
            "/v1/social/reports",
            {"channel": "CHAT_CHANNEL_PRIVATE", "message_id": "1-1", "user_id": hel.user_id},
        )
    assert (refused.value.status, refused.value.code) == (404, "message_not_found")
    # Filed in the moderators' queue (tests/integration/test_moderation.py).
    with Redis.from_url(social_stack.redis_url, decode_responses=True) as redis:
        reports = [redis.hgetall(keys.report(i)) for i in redis.zrange(keys.REPORTS_OPEN, 0, -1)]
    (report,) = [r for r in reports if r["reporter_id"] == gil.user_id]
    assert (report["reporter_id"], report["sender_id"], report["text"], report["reason"]) == (
        gil.user_id,
        hel.user_id,
        f"spam {CHAT_LIMIT - 1}",
        "spam",
    )

    # Blocking ends the friendship and refuses messages and requests, both ways.
    await gil.call("PUT", f"/v1/social/blocks/{hel.user_id}")
    assert (await gil.call("GET", "/v1/social/friends"))["blocked"] == [hel.user_id]
    assert (await hel.call("GET", "/v1/social/friends"))["friends"] == []
    for player, other, path, body in (
        (hel, gil, f"/v1/social/messages/{gil.user_id}", {"text": "oi?"}),
        (hel, gil, "/v1/social/friends/requests", {"user_id": gil.user_id}),
        (gil, hel, f"/v1/social/messages/{hel.user_id}", {"text": "oi?"}),
    ):
        with pytest.raises(ApiRefused) as refused:
            await player.call("POST", path, body)
        assert (refused.value.status, refused.value.code) == (403, "blocked"), other.name

    # At a table, the blocker does not hear the blocked user.
    lia = await register(two, "lia")  # Hel has used up her messages: Lia, blocked too
    await gil.call("PUT", f"/v1/social/blocks/{lia.user_id}")
    table = await gil.create_table("domino", 4)
    await lia.sit(table["id"], 1)
    ivo = await register(one, "ivo")
    await ivo.sit(table["id"], 2)
    base = social_stack.gateway(0)
    gil_feed = await lobby_feed(gil, base, table["id"])
    try:
        await lia.call("POST", f"/v1/tables/{table['id']}/chat", {"text": "ignora isso"})
        ivo_said = await ivo.call("POST", f"/v1/tables/{table['id']}/chat", {"text": "oi gente"})
        assert (await next_chat(gil_feed))[0] == ivo_said  # Lia's came first, and was left out
        history = await gil.call("GET", f"/v1/tables/{table['id']}/chat")
        assert [m["text"] for m in history["messages"]] == ["oi gente"]
    finally:
        await gil_feed.__aexit__()

    # The refusals are counted by reason on the replicas that refused them.
    text = httpx.get(social_stack.gateway_metrics_url(1), timeout=10).text
    assert _metric(text, 'rodada_chat_refused_total{reason="rate_limited"}') >= 3
    assert _metric(text, 'rodada_chat_refused_total{reason="blocked"}') >= 1  # Hel's message
    text = httpx.get(social_stack.gateway_metrics_url(0), timeout=10).text
    assert _metric(text, 'rodada_chat_refused_total{reason="message_too_long"}') >= 1
    assert _metric(text, 'rodada_chat_refused_total{reason="blocked"}') >= 1  # Gil's
    assert _metric(text, 'rodada_chat_messages_total{channel="private"}') >= 2


def _metric(text: str, sample: str) -> float:
    found = re.search("^" + re.escape(sample) + r" (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


async def test_friends_and_chat_over_grpc(
    replicas: tuple[httpx.AsyncClient, httpx.AsyncClient], social_stack: Stack
) -> None:
    one, two = replicas
    jo, ka = await register(one, "jo"), await register(two, "ka")
    async with (
        grpc.aio.insecure_channel(social_stack.platform_grpc(0)) as channel_one,
        grpc.aio.insecure_channel(social_stack.platform_grpc(1)) as channel_two,
    ):
        jo_social = social_pb2_grpc.SocialServiceStub(channel_one)
        ka_social = social_pb2_grpc.SocialServiceStub(channel_two)
        ka_platform = platform_pb2_grpc.PlatformServiceStub(channel_two)
        jo_platform = platform_pb2_grpc.PlatformServiceStub(channel_one)

        ka_stream = ka_social.FollowSocial(social_pb2.FollowSocialRequest(), metadata=bearer(ka.token))
        ka_events: asyncio.Queue[social_pb2.SocialEvent] = asyncio.Queue()

        async def read() -> None:
            async for item in ka_stream:
                ka_events.put_nowait(item.event)

        reader = asyncio.create_task(read())
        try:
            # Ka is online once her stream is open (presence reads the feeds' registry).
            async def next_event(kind: str) -> social_pb2.SocialEvent:
                while True:
                    event = await asyncio.wait_for(ka_events.get(), 15)
                    if event.WhichOneof("body") == kind:
                        return event

            await jo_social.RequestFriend(
                social_pb2.RequestFriendRequest(user_id=ka.user_id), metadata=bearer(jo.token)
            )
            asked = await next_event("friend")
            assert (
                asked.friend.kind == social_pb2.FRIEND_NOTICE_KIND_REQUESTED
                and asked.friend.user_id == jo.user_id
            )
            reply = await ka_social.AcceptFriend(
                social_pb2.AcceptFriendRequest(user_id=jo.user_id), metadata=bearer(ka.token)
            )
            assert reply.friend.user_id == jo.user_id
            listed = await jo_social.ListFriends(social_pb2.ListFriendsRequest(), metadata=bearer(jo.token))
            assert [(f.user_id, f.online) for f in listed.friends] == [(ka.user_id, True)]

            sent = await jo_social.SendMessage(
                social_pb2.SendMessageRequest(user_id=ka.user_id, text=HTML), metadata=bearer(jo.token)
            )
            assert sent.message.text == HTML
            heard = await next_event("message")
            assert heard.message == sent.message

            # Errors keep their codes across faces.
            for text, expected in (("y" * 201, (grpc.StatusCode.INVALID_ARGUMENT, "message_too_long")),):
                with pytest.raises(grpc.aio.AioRpcError) as error:
                    await jo_social.SendMessage(
                        social_pb2.SendMessageRequest(user_id=ka.user_id, text=text),
                        metadata=bearer(jo.token),
                    )
                assert refusal(error.value) == expected
            with pytest.raises(grpc.aio.AioRpcError) as error:
                await jo_social.ListFriends(social_pb2.ListFriendsRequest())
            assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED

            # A Dominó table: Jo invites, Ka takes the seat opposite, chat over FollowTable.
            created = await jo_platform.CreateTable(
                platform_pb2.CreateTableRequest(game="domino", seats=4), metadata=bearer(jo.token)
            )
            table_id = created.table.id
            invited = await jo_social.InviteFriend(
                social_pb2.InviteFriendRequest(user_id=ka.user_id, table_id=table_id),
                metadata=bearer(jo.token),
            )
            got = await next_event("invite")
            assert got.invite == invited.invite and got.invite.seat == 2
            await ka_platform.SitAtTable(
                platform_pb2.SitAtTableRequest(table_id=table_id, seat=got.invite.seat),
                metadata=bearer(ka.token),
            )
            follow = ka_platform.FollowTable(
                platform_pb2.FollowTableRequest(table_id=table_id), metadata=bearer(ka.token)
            )
            async for item in follow:  # the lobby's history, then the table
                if item.WhichOneof("item") == "table":
                    break
            said = await jo_social.SendTableMessage(
                social_pb2.SendTableMessageRequest(table_id=table_id, text=HTML), metadata=bearer(jo.token)
            )
            async for item in follow:
                if item.WhichOneof("item") == "event" and item.event.WhichOneof("body") == "chat":
                    assert unpack(item.event.chat, social_pb2.ChatMessage) == said.message
                    assert said.message.channel == social_pb2.CHAT_CHANNEL_TABLE_PLAYERS
                    break
            follow.cancel()
            history = await ka_social.ListTableMessages(
                social_pb2.ListTableMessagesRequest(table_id=table_id), metadata=bearer(ka.token)
            )
            assert [m.text for m in history.messages] == [HTML]

            await ka_social.BlockUser(
                social_pb2.BlockUserRequest(user_id=jo.user_id), metadata=bearer(ka.token)
            )
            with pytest.raises(grpc.aio.AioRpcError) as error:
                await jo_social.SendMessage(
                    social_pb2.SendMessageRequest(user_id=ka.user_id, text="oi"), metadata=bearer(jo.token)
                )
            assert refusal(error.value) == (grpc.StatusCode.PERMISSION_DENIED, "blocked")
        finally:
            ka_stream.cancel()
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)


async def test_the_api_documents_are_typed_from_the_protos(
    replicas: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    one, _ = replicas
    document = (await one.get("/openapi.json")).json()
    paths, schemas = document["paths"], document["components"]["schemas"]

    def body(path: str, method: str) -> str:
        responses = paths[path][method]["responses"]
        ok = next(code for code in responses if code.startswith("2"))
        return str(responses[ok]["content"]["application/json"]["schema"]["$ref"]).rsplit("/", 1)[1]

    assert body("/v1/social/friends", "get") == "rodada.platform.v1.ListFriendsResponse"
    assert body("/v1/social/messages/{user_id}", "post") == "rodada.platform.v1.ChatMessage"
    assert body("/v1/tables/{table_id}/chat", "get") == "rodada.platform.v1.ListTableMessagesResponse"
    assert body("/v1/social/friends/{user_id}/invite", "post") == "rodada.platform.v1.TableInvite"
    assert schemas["rodada.platform.v1.ChatMessage"]["properties"]["text"] == {"type": "string"}
    assert schemas["rodada.platform.v1.ChatMessage"]["properties"]["channel"] == {
        "$ref": "#/components/schemas/rodada.platform.v1.ChatChannel"
    }
    # A table event's chat is a ChatMessage packed in an Any, typed as such.
    event = schemas["rodada.common.v1.MatchEvent"]
    chat = next(
        member["properties"]["chat"]
        for union in event["allOf"][1:]
        for member in union["oneOf"]
        if "chat" in member["properties"]
    )
    assert chat == {"$ref": "#/components/schemas/rodada.platform.v1.ChatMessage@any"}
    # The feed is no HTTP operation: the AsyncAPI document describes it.
    assert "/v1/social/events" not in paths
    asyncapi = (await one.get("/v1/feeds/asyncapi.json")).json()
    assert asyncapi["channels"]["social"]["address"] == "/v1/social/events"
    item = asyncapi["channels"]["social"]["messages"]["item"]["payload"]
    assert item == {"$ref": "#/components/schemas/rodada.platform.v1.FollowSocialResponse"}
    assert "rodada.platform.v1.SocialEvent" in asyncapi["components"]["schemas"]


async def test_requests_answers_blocks_and_a_private_table_invite(
    replicas: tuple[httpx.AsyncClient, httpx.AsyncClient], social_stack: Stack
) -> None:
    one, two = replicas
    ana, bia, caio = await register(one, "ana"), await register(two, "bia"), await register(one, "caio")

    def kinds(events: list[dict[str, Any]]) -> list[str]:
        return [e["friend"]["kind"].removeprefix("FRIEND_NOTICE_KIND_") for e in events if "friend" in e]

    async with SocialFeed(social_stack.gateway(0), ana.token) as ana_social:
        await ana.call("POST", "/v1/social/friends/requests", {"user_id": bia.user_id})
        await bia.call("POST", f"/v1/social/friends/{ana.user_id}/decline")
        await ana_social.until(lambda e: "friend" in e)
        # Withdrawing one's own request: nothing is left on either side.
        await ana.call("POST", "/v1/social/friends/requests", {"user_id": bia.user_id})
        await ana.call("POST", f"/v1/social/friends/{bia.user_id}/decline")
        assert (await bia.call("GET", "/v1/social/friends"))["incoming"] == []
        assert (await ana.call("GET", "/v1/social/friends"))["outgoing"] == []
        await ana.call("POST", "/v1/social/friends/requests", {"user_id": bia.user_id})
        await bia.call("POST", f"/v1/social/friends/{ana.user_id}/accept")
        await bia.call("DELETE", f"/v1/social/friends/{ana.user_id}")
        await ana_social.until(lambda e: e.get("friend", {}).get("kind") == "FRIEND_NOTICE_KIND_REMOVED")
        assert kinds(ana_social.events) == ["DECLINED", "ACCEPTED", "REMOVED"]
    assert (await ana.call("GET", "/v1/social/friends"))["friends"] == []
    for player, method, path, body, expected in (
        (ana, "DELETE", f"/v1/social/friends/{bia.user_id}", None, (404, "not_friends")),
        (ana, "POST", f"/v1/social/messages/{bia.user_id}", {"text": "oi"}, (404, "not_friends")),
        (ana, "POST", "/v1/social/friends/requests", {"user_id": ana.user_id}, (409, "own_user")),
        (ana, "POST", "/v1/social/friends/requests", {"username": "nobody-here"}, (404, "user_not_found")),
        (ana, "POST", "/v1/social/friends/requests", {}, (422, "invalid_request")),
        (ana, "GET", f"/v1/social/messages/{bia.user_id}?limit=999", None, (404, "not_friends")),
    ):
        with pytest.raises(ApiRefused) as refused:
            await player.call(method, path, body)
        assert (refused.value.status, refused.value.code) == expected, path
    # Guests have no friends, but may chat at tables.
    guest = (await one.post("/v1/auth/guest", json={})).json()
    with pytest.raises(ApiRefused) as refused:
        await Player(one, guest["access_token"], guest["user"]["id"], "g").call(
            "POST", "/v1/social/friends/requests", {"user_id": ana.user_id}
        )
    assert (refused.value.status, refused.value.code) == (403, "account_required")

    # A block lifted: requests are possible again, the friendship is not back by itself.
    await bia.call("PUT", f"/v1/social/blocks/{ana.user_id}")
    await bia.call("DELETE", f"/v1/social/blocks/{ana.user_id}")
    assert (await bia.call("GET", "/v1/social/friends"))["blocked"] == []
    await ana.call("POST", "/v1/social/friends/requests", {"user_id": bia.user_id})
    await bia.call("POST", "/v1/social/friends/requests", {"user_id": ana.user_id})
    await bia.call("POST", "/v1/social/friends/requests", {"user_id": caio.user_id})
    await caio.call("POST", f"/v1/social/friends/{bia.user_id}/accept")

    # A private table (Yatzy): the host's invite carries a code to join with.
    table = await ana.create_table("yatzy", 3)
    async with SocialFeed(social_stack.gateway(1), bia.token) as bia_social:
        invite = await ana.call("POST", f"/v1/social/friends/{bia.user_id}/invite", {"table_id": table["id"]})
        assert invite["invite_code"] and "seat" not in invite
        got = await bia_social.until(lambda e: "invite" in e)
        assert got["invite"] == invite
    joined = await bia.join(invite["invite_code"])
    assert joined["players"][1]["user_id"] == bia.user_id
    # Seated but not the host: a private table's invites are the host's.
    with pytest.raises(ApiRefused) as refused:
        await bia.call("POST", f"/v1/social/friends/{caio.user_id}/invite", {"table_id": table["id"]})
    assert (refused.value.status, refused.value.code) == (403, "not_host")
    # Not seated: nothing to invite to.
    with pytest.raises(ApiRefused) as refused:
        await caio.call("POST", f"/v1/social/friends/{bia.user_id}/invite", {"table_id": table["id"]})
    assert (refused.value.status, refused.value.code) == (403, "not_seated")


async def test_a_request_accepted_on_both_replicas_at_once_makes_one_friendship(
    replicas: tuple[httpx.AsyncClient, httpx.AsyncClient], social_stack: Stack
) -> None:
    one, two = replicas
    ana, bia = await register(one, "ana"), await register(one, "bia")
    bia_two = Player(two, bia.token, bia.user_id, bia.name)
    async with SocialFeed(social_stack.gateway(1), ana.token) as ana_social:
        await ana.call("POST", "/v1/social/friends/requests", {"user_id": bia.user_id})
        answers = await asyncio.gather(
            *(
                p.call("POST", f"/v1/social/friends/{ana.user_id}/accept")
                for p in (bia, bia_two, bia, bia_two)
            ),
            return_exceptions=True,
        )
        accepted = [a for a in answers if isinstance(a, dict)]
        refused = [a for a in answers if isinstance(a, ApiRefused)]
        assert len(accepted) == 1 and [r.code for r in refused] == ["request_not_found"] * 3
        await ana_social.until(lambda e: "friend" in e)
        # One notice: a marker message sent after it is the next event.
        said = await bia.call("POST", f"/v1/social/messages/{ana.user_id}", {"text": "marcador"})
        nxt = await ana_social.until(lambda e: "message" in e)
        assert nxt["message"]["id"] == said["id"]
        notices = [e["friend"]["kind"] for e in ana_social.events if "friend" in e]
        assert notices == ["FRIEND_NOTICE_KIND_ACCEPTED"]
        assert len(ana_social.events) == 2


async def test_a_watcher_who_sits_down_moves_from_the_spectators_chat_to_the_players(
    replicas: tuple[httpx.AsyncClient, httpx.AsyncClient], social_stack: Stack
) -> None:
    one, two = replicas
    ana, leo, rui = await register(one, "ana"), await register(two, "leo"), await register(one, "rui")
    table = await ana.create_table("domino", 4)
    table_id = table["id"]
    leo_feed = await lobby_feed(leo, social_stack.gateway(1), table_id)  # watching, not seated
    try:
        spectators = await rui.call("POST", f"/v1/tables/{table_id}/chat", {"text": "quem joga?"})
        assert (await next_chat(leo_feed))[0] == spectators
        await leo.sit(table_id, 2)  # the same feed, now a player's
        await rui.call("POST", f"/v1/tables/{table_id}/chat", {"text": "não ouves isto"})
        players = await ana.call("POST", f"/v1/tables/{table_id}/chat", {"text": "bem-vindo, parceiro"})
        assert (await next_chat(leo_feed))[0] == players
    finally:
        await leo_feed.__aexit__()


async def test_a_draining_replica_sends_social_feeds_elsewhere_and_nothing_is_lost(
    replicas: tuple[httpx.AsyncClient, httpx.AsyncClient], social_stack: Stack
) -> None:
    one, _ = replicas
    third = social_stack.gateway(2)  # a replica of its own, to drain
    ana, bia = await register(one, "ana"), await register(one, "bia")
    await ana.call("POST", "/v1/social/friends/requests", {"user_id": bia.user_id})
    await bia.call("POST", f"/v1/social/friends/{ana.user_id}/accept")
    async with SocialFeed(third, bia.token) as feed:
        first = await ana.call("POST", f"/v1/social/messages/{bia.user_id}", {"text": "um"})
        assert (await feed.until(lambda e: "message" in e))["message"] == first
        social_stack.stop("gateway-2")  # SIGTERM: it drains
        ended = json.loads(await asyncio.wait_for(feed.socket.recv(), 30))
        assert ended["error"]["code"] == "draining"
        await asyncio.wait_for(feed.socket.wait_closed(), 30)
        assert feed.socket.close_code == 1012
        last_id = feed.events[-1]["id"]
    second = await ana.call("POST", f"/v1/social/messages/{bia.user_id}", {"text": "dois"})
    # Resumed on another replica from the last id: exactly what followed.
    async with SocialFeed(social_stack.gateway(0), bia.token, after_id=last_id) as resumed:
        got = await resumed.until(lambda e: "message" in e)
        assert got["message"] == second
        assert [e["message"]["text"] for e in resumed.events if "message" in e] == ["dois"]


async def test_a_block_reaches_the_feeds_already_open_on_every_replica(
    replicas: tuple[httpx.AsyncClient, httpx.AsyncClient], social_stack: Stack
) -> None:
    """Ana follows a table on replica 0 (WebSocket) and replica 1 (gRPC);
    she blocks Bob through replica 1: Bob's next message reaches neither of
    her open feeds, Cy's does; she unblocks him through replica 0, and his
    next message reaches both again."""
    one, two = replicas
    ana, bob, cy = await register(one, "ana"), await register(two, "bob"), await register(two, "cy")
    table = await ana.create_table("yatzy", 3)
    table_id = table["id"]
    await bob.join(table["invite_code"])
    await cy.join(table["invite_code"])
    say = f"/v1/tables/{table_id}/chat"
    ws_feed = await lobby_feed(ana, social_stack.gateway(0), table_id)
    async with grpc.aio.insecure_channel(social_stack.platform_grpc(1)) as channel:
        platform = platform_pb2_grpc.PlatformServiceStub(channel)
        stream = platform.FollowTable(
            platform_pb2.FollowTableRequest(table_id=table_id), metadata=bearer(ana.token)
        )
        heard: asyncio.Queue[social_pb2.ChatMessage] = asyncio.Queue()

        async def read() -> None:
            async for item in stream:
                if item.WhichOneof("item") == "event" and item.event.HasField("chat"):
                    heard.put_nowait(unpack(item.event.chat, social_pb2.ChatMessage))

        reader = asyncio.create_task(read())
        try:
            first = await bob.call("POST", say, {"text": "antes"})
            assert (await next_chat(ws_feed))[0]["id"] == first["id"]
            assert (await asyncio.wait_for(heard.get(), 15)).id == first["id"]

            await two.put(f"/v1/social/blocks/{bob.user_id}", headers=ana.headers)
            await bob.call("POST", say, {"text": "depois"})
            said = await cy.call("POST", say, {"text": "oi"})
            assert (await next_chat(ws_feed))[0]["id"] == said["id"]  # Bob's came first: left out
            assert (await asyncio.wait_for(heard.get(), 15)).id == said["id"]

            await one.delete(f"/v1/social/blocks/{bob.user_id}", headers=ana.headers)
            again = await bob.call("POST", say, {"text": "voltei"})
            assert (await next_chat(ws_feed))[0]["id"] == again["id"]
            assert (await asyncio.wait_for(heard.get(), 15)).id == again["id"]
        finally:
            reader.cancel()
            stream.cancel()
            await ws_feed.__aexit__()
