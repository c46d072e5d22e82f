"""The mobile path: two apps that speak only gRPC, to the gateway's
PlatformService, play a complete Bozó duel from sign-up to the result —
creating, joining and starting the table, then driven by FollowTable alone
(each app decides on the snapshots its feed pushes; no HTTP anywhere) — and
two apps find each other with FindMatch."""

from __future__ import annotations

import asyncio
import secrets

import grpc
import pytest
from rodada.bozo.v1 import bozo_pb2
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

from services.core.errors import error_reason
from tests.integration.grpc_client import (
    bearer,
    feed_events,
    feed_snapshots,
    follow_table,
    pack,
    table_change,
    unpack,
)
from tools.stack import Stack

ACTIVE, FINISHED = match_pb2.MATCH_STATUS_ACTIVE, match_pb2.MATCH_STATUS_FINISHED
DUEL = bozo_pb2.Options(mode=bozo_pb2.DUEL)


async def app(
    api: platform_pb2_grpc.PlatformServiceStub, token: str, table_id: str, drawn: asyncio.Event
) -> list[platform_pb2.FollowTableResponse]:
    """One player's app: follows the table (``drawn`` is set once it has a
    state to draw from) and, whenever a pushed snapshot says it is this
    seat's turn, throws and scores the best open box. Returns everything the
    feed delivered; the feed ends by itself after the match."""
    items: list[platform_pb2.FollowTableResponse] = []
    reached = 0  # the version this app's own moves brought the match to
    async for item in follow_table(api, token, table_id):
        items.append(item)
        if item.WhichOneof("item") in ("table", "snapshot"):
            drawn.set()
        if item.WhichOneof("item") != "snapshot":
            continue
        snap = item.snapshot
        if snap.status != ACTIVE or snap.version < reached or list(snap.to_act) != [snap.seat]:
            continue
        thrown = await api.Act(
            platform_pb2.ActRequest(
                table_id=table_id,
                expected_version=snap.version,
                action=pack(bozo_pb2.Action(throw=bozo_pb2.Throw())),
            ),
            metadata=bearer(token),
        )
        preview = unpack(thrown.match.view, bozo_pb2.View).preview
        best = max(preview, key=lambda p: p.points)
        scored = await api.Act(
            platform_pb2.ActRequest(
                table_id=table_id,
                expected_version=thrown.match.version,
                action=pack(bozo_pb2.Action(score=bozo_pb2.Score(box=best.box))),
            ),
            metadata=bearer(token),
        )
        reached = scored.match.version
    return items


async def test_a_bozo_duel_from_sign_up_to_result_over_grpc_only(stack: Stack) -> None:
    async with grpc.aio.insecure_channel(stack.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        # Accounts: ana signs up (and logs in again), bia plays as a guest.
        username = f"ana{secrets.token_hex(3)}"
        ana = (
            await api.SignUp(platform_pb2.SignUpRequest(username=username, password="correct horse"))
        ).session
        again = (
            await api.LogIn(platform_pb2.LogInRequest(username=username, password="correct horse"))
        ).session
        assert again.user.id == ana.user.id and ana.token_type == "bearer" and ana.user.role == "user"
        bia = (await api.LogInAsGuest(platform_pb2.LogInAsGuestRequest(name="bia"))).session
        assert bia.user.role == "guest" and bia.user.name == "bia"
        with pytest.raises(grpc.aio.AioRpcError) as taken:
            await api.SignUp(platform_pb2.SignUpRequest(username=username, password="correct horse"))
        assert (taken.value.code(), error_reason(taken.value)) == (
            grpc.StatusCode.ALREADY_EXISTS,
            "username_taken",
        )
        me = await api.GetMe(platform_pb2.GetMeRequest(), metadata=bearer(ana.access_token))
        assert me.user == ana.user
        games = {g.name: g for g in (await api.ListGames(platform_pb2.ListGamesRequest())).games}
        assert [m.name for m in games["bozo"].modes] == ["solo", "duel", "duplas"]

        # The table: created, joined and started over gRPC too.
        table = (
            await api.CreateTable(
                platform_pb2.CreateTableRequest(game="bozo", seats=2, options=pack(DUEL)),
                metadata=bearer(ana.access_token),
            )
        ).table
        assert table.invite_code and table.host == ana.user.id and table.status == "open"
        assert table.mode == "duel" and unpack(table.options, bozo_pb2.Options) == DUEL
        assert [p.user_id for p in table.players] == [ana.user.id, ""]  # seat 1 free
        drawn = [asyncio.Event(), asyncio.Event()]
        apps = [asyncio.create_task(app(api, ana.access_token, table.id, drawn[0]))]
        await asyncio.wait_for(drawn[0].wait(), 10)
        joined = (
            await api.JoinTable(
                platform_pb2.JoinTableRequest(invite_code=table.invite_code),
                metadata=bearer(bia.access_token),
            )
        ).table
        assert joined.invite_code == "" and not joined.invites  # only the host sees invites
        assert [p.user_id for p in joined.players] == [ana.user.id, bia.user.id]
        apps.append(asyncio.create_task(app(api, bia.access_token, table.id, drawn[1])))
        await asyncio.wait_for(drawn[1].wait(), 10)
        seen_by_host = (
            await api.GetTable(
                platform_pb2.GetTableRequest(table_id=table.id), metadata=bearer(ana.access_token)
            )
        ).table
        assert seen_by_host.invite_code == table.invite_code and seen_by_host.players == joined.players
        first = (
            await api.StartTable(
                platform_pb2.StartTableRequest(table_id=table.id), metadata=bearer(ana.access_token)
            )
        ).match
        assert first.status == ACTIVE and first.seat == 0 and list(first.to_act) == [0]
        assert [s.user_id for s in first.seats] == [ana.user.id, bia.user.id] and first.mode == "duel"

        ana_items, bia_items = await asyncio.wait_for(asyncio.gather(*apps), 120)

        # Both feeds ended by themselves with the final event and snapshot.
        final = ana_items[-1].snapshot
        assert final.status == FINISHED and final.seat == 0
        assert bia_items[-1].snapshot.status == FINISHED and bia_items[-1].snapshot.seat == 1
        assert final.result.reason == match_pb2.END_REASON_COMPLETED
        view = unpack(final.view, bozo_pb2.View)
        assert [len(card.boxes) for card in view.cards] == [10, 10]
        totals = [card.total for card in view.cards]
        assert list(final.result.scores) == totals and list(final.scores) == totals
        assert list(final.result.ranks) == [1 + (totals[1] > totals[0]), 1 + (totals[0] > totals[1])]
        for items, seat in ((ana_items, 0), (bia_items, 1)):
            # Each app drew from the table (both followed before the start),
            # then from its seat's snapshots.
            kinds = [item.WhichOneof("item") for item in items]
            assert "table" in kinds and kinds.index("table") < kinds.index("snapshot")
            assert {s.seat for s in feed_snapshots(items)} == {seat}
            # The feed's last snapshot is what GetView says.
            token = (ana if seat == 0 else bia).access_token
            view_now = await api.GetView(
                platform_pb2.GetViewRequest(table_id=table.id), metadata=bearer(token)
            )
            # Nothing joins a finished match's history (no presence notice
            # when the feeds close): the final snapshot stays exact.
            assert view_now.match == items[-1].snapshot
            last_event = feed_events(items)[-1]
            assert last_event.final and last_event.result == final.result
        # The host's feed: the table's whole history, from its opening, in
        # order and without a gap; the guest's the same but for what only
        # the host sees (the table invite).
        ana_events, bia_events = feed_events(ana_items), feed_events(bia_items)
        assert [e.id for e in ana_events] == list(range(1, final.last_event_id + 1))
        assert [e.id for e in bia_events] == [e.id for e in ana_events if not e.host_only]
        changes = [(c.kind, c.seat) for e in ana_events if (c := table_change(e))]
        assert changes[0][0] == platform_pb2.TABLE_CHANGE_KIND_OPENED
        assert (platform_pb2.TABLE_CHANGE_KIND_JOINED, 1) in changes
        assert changes[-1][0] == platform_pb2.TABLE_CHANGE_KIND_STARTED
        scored = [
            body.scored
            for e in ana_events
            if e.WhichOneof("body") == "event"
            and (body := unpack(e.event, bozo_pb2.Event)).WhichOneof("event") == "scored"
        ]
        assert len(scored) == 20 and [s.seat for s in scored] == [0, 1] * 10
        assert [[s.total for s in scored if s.seat == seat][-1] for seat in (0, 1)] == totals

        # A stale action is refused with ABORTED over this face too.
        with pytest.raises(grpc.aio.AioRpcError) as stale:
            await api.Act(
                platform_pb2.ActRequest(
                    table_id=table.id,
                    expected_version=1,
                    action=pack(bozo_pb2.Action(throw=bozo_pb2.Throw())),
                ),
                metadata=bearer(ana.access_token),
            )
        assert (stale.value.code(), error_reason(stale.value)) == (grpc.StatusCode.ABORTED, "stale_version")
        # The session refreshes over gRPC too, once.
        renewed = (await api.Refresh(platform_pb2.RefreshRequest(refresh_token=ana.refresh_token))).session
        assert renewed.access_token and renewed.user.id == ana.user.id
        with pytest.raises(grpc.aio.AioRpcError) as reused:
            await api.Refresh(platform_pb2.RefreshRequest(refresh_token=ana.refresh_token))
        assert reused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert error_reason(reused.value) == "refresh_token_used"
        with pytest.raises(grpc.aio.AioRpcError) as anonymous:
            await api.GetTable(platform_pb2.GetTableRequest(table_id=table.id))
        assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_two_apps_find_a_match_over_grpc(stack: Stack) -> None:
    async with grpc.aio.insecure_channel(stack.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        sessions = [
            (await api.LogInAsGuest(platform_pb2.LogInAsGuestRequest(name=n))).session for n in ("ana", "bia")
        ]

        async def find(session: platform_pb2.Session) -> list[platform_pb2.TicketUpdate]:
            request = platform_pb2.FindMatchRequest(game="bozo", options=pack(DUEL))
            return [
                reply.update
                async for reply in api.FindMatch(request, metadata=bearer(session.access_token), timeout=60)
            ]

        updates = await asyncio.gather(*(find(s) for s in sessions))
        last = [u[-1] for u in updates]
        assert all(u.WhichOneof("update") == "matched" for u in last)
        assert last[0].matched.table_id == last[1].matched.table_id
        assert {u.matched.seat for u in last} == {0, 1}
        assert updates[0][0].WhichOneof("update") == "queue"  # waited in the queue first
        assert len({u.ticket_id for u in updates[0] + updates[1]}) == 2  # one ticket each
        snap = (
            await api.GetView(
                platform_pb2.GetViewRequest(table_id=last[0].matched.table_id),
                metadata=bearer(sessions[0].access_token),
            )
        ).match
        assert snap.status == ACTIVE and snap.seat == last[0].matched.seat
        assert {s.user_id for s in snap.seats} == {s.user.id for s in sessions}
        for request, code, reason in [
            # Solo training is not queued.
            (platform_pb2.FindMatchRequest(game="bozo"), grpc.StatusCode.INVALID_ARGUMENT, "invalid_mode"),
            # Guests play casual.
            (
                platform_pb2.FindMatchRequest(game="bozo", ranked=True, options=pack(DUEL)),
                grpc.StatusCode.PERMISSION_DENIED,
                "account_required",
            ),
        ]:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                async for _ in api.FindMatch(request, metadata=bearer(sessions[0].access_token)):
                    pass
            assert (refused.value.code(), error_reason(refused.value)) == (code, reason)
