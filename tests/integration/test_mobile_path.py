"""The mobile path: two apps that speak only gRPC play a complete Bozó duel,
from sign-up to the result, through the gateway's PlatformService."""

from __future__ import annotations

import asyncio
import secrets

import grpc
import pytest
from rodada.bozo.v1 import bozo_pb2
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

from services.kit.errors import error_reason
from tests.integration.grpc_client import bearer, pack, unpack
from tools.stack import Stack


async def test_a_bozo_duel_from_sign_up_to_result_over_grpc_only(stack: Stack) -> None:
    stack.service("bozo")
    async with grpc.aio.insecure_channel(stack.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        ana = await api.SignUp(
            platform_pb2.Credentials(username=f"ana{secrets.token_hex(3)}", password="correct horse")
        )
        bia = await api.LogInAsGuest(platform_pb2.GuestRequest(name="bia"))
        with pytest.raises(grpc.aio.AioRpcError) as taken:
            await api.SignUp(platform_pb2.Credentials(username=ana.user.name, password="correct horse"))
        assert (
            taken.value.code() == grpc.StatusCode.ALREADY_EXISTS
            and error_reason(taken.value) == "username_taken"
        )
        auth = {ana.user.id: bearer(ana.access_token), bia.user.id: bearer(bia.access_token)}

        table = await api.CreateTable(
            platform_pb2.CreateTableRequest(
                game="bozo", seats=2, options=pack(bozo_pb2.Options(mode=bozo_pb2.DUEL))
            ),
            metadata=auth[ana.user.id],
        )
        assert table.invite_code and table.players[0].user_id == ana.user.id
        joined = await api.JoinTable(
            platform_pb2.JoinTableRequest(invite_code=table.invite_code), metadata=auth[bia.user.id]
        )
        assert joined.invite_code == ""  # only the host sees invites
        snap = await api.StartTable(platform_pb2.TableRequest(table_id=table.id), metadata=auth[ana.user.id])

        events: list[match_pb2.MatchEvent] = []

        async def follow() -> None:
            request = platform_pb2.FollowRequest(table_id=table.id)
            async for event in api.Follow(request, metadata=auth[bia.user.id]):
                events.append(event)

        follower = asyncio.create_task(follow())
        seats = [s.user_id for s in snap.seats]
        while snap.status == match_pb2.ACTIVE:
            (seat,) = snap.to_act
            me = auth[seats[seat]]
            snap = await api.GetView(platform_pb2.TableRequest(table_id=table.id), metadata=me)
            throw = bozo_pb2.Action(throw=bozo_pb2.Throw())
            snap = await api.Act(
                platform_pb2.ActRequest(table_id=table.id, expected_version=snap.version, action=pack(throw)),
                metadata=me,
            )
            preview = unpack(snap.view, bozo_pb2.View).preview
            best = max(preview, key=lambda p: p.points)
            score = bozo_pb2.Action(score=bozo_pb2.Score(box=best.box))
            snap = await api.Act(
                platform_pb2.ActRequest(table_id=table.id, expected_version=snap.version, action=pack(score)),
                metadata=me,
            )
        await asyncio.wait_for(follower, 10)
        assert snap.status == match_pb2.FINISHED and snap.result.reason == "completed"
        view = unpack(snap.view, bozo_pb2.View)
        assert [card.total for card in view.cards] == list(snap.result.scores)
        assert len(events) == snap.last_event_id and [e.id for e in events] == list(range(1, len(events) + 1))
        # A stale action is refused with ABORTED over this face too.
        with pytest.raises(grpc.aio.AioRpcError) as stale:
            await api.Act(
                platform_pb2.ActRequest(
                    table_id=table.id,
                    expected_version=1,
                    action=pack(bozo_pb2.Action(throw=bozo_pb2.Throw())),
                ),
                metadata=auth[ana.user.id],
            )
        assert stale.value.code() == grpc.StatusCode.ABORTED and error_reason(stale.value) == "stale_version"
        # The session refreshes over gRPC too, once.
        renewed = await api.Refresh(platform_pb2.RefreshRequest(refresh_token=ana.refresh_token))
        assert renewed.access_token and renewed.user.id == ana.user.id
        with pytest.raises(grpc.aio.AioRpcError) as reused:
            await api.Refresh(platform_pb2.RefreshRequest(refresh_token=ana.refresh_token))
        assert reused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.aio.AioRpcError) as anonymous:
            await api.GetTable(platform_pb2.TableRequest(table_id=table.id))
        assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_two_apps_find_a_match_over_grpc(stack: Stack) -> None:
    stack.service("bozo")
    async with grpc.aio.insecure_channel(stack.platform_grpc()) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        sessions = [await api.LogInAsGuest(platform_pb2.GuestRequest(name=n)) for n in ("ana", "bia")]

        async def find(session: platform_pb2.Session) -> list[platform_pb2.TicketUpdate]:
            request = platform_pb2.FindMatchRequest(
                game="bozo", options=pack(bozo_pb2.Options(mode=bozo_pb2.DUEL))
            )
            return [
                u async for u in api.FindMatch(request, metadata=bearer(session.access_token), timeout=60)
            ]

        updates = await asyncio.gather(*(find(s) for s in sessions))
        last = [u[-1] for u in updates]
        assert all(u.WhichOneof("update") == "matched" for u in last)
        assert last[0].matched.table_id == last[1].matched.table_id
        assert {u.matched.seat for u in last} == {0, 1}
        assert updates[0][0].WhichOneof("update") == "queue"  # waited in the queue first
        snap = await api.GetView(
            platform_pb2.TableRequest(table_id=last[0].matched.table_id),
            metadata=bearer(sessions[0].access_token),
        )
        assert snap.status == match_pb2.ACTIVE and {s.user_id for s in snap.seats} == {
            s.user.id for s in sessions
        }
        for request, reason in [
            (platform_pb2.FindMatchRequest(game="bozo"), "invalid_mode"),  # solo training is not queued
            (
                platform_pb2.FindMatchRequest(
                    game="bozo", ranked=True, options=pack(bozo_pb2.Options(mode=bozo_pb2.DUEL))
                ),
                "account_required",  # guests play casual
            ),
        ]:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                async for _ in api.FindMatch(request, metadata=bearer(sessions[0].access_token)):
                    pass
            assert error_reason(refused.value) == reason
