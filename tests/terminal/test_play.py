"""The terminal client plays over gRPC alone against the real stack, driven
key by key through Textual's pilot at 80x24:

- a complete Dudo game against two stub-driven players that join with the
  invite code read off its screen: its own dice face up, the others' as
  "?" until a call reveals exactly what they had;
- a complete Dominó match found by matchmaking, with the connection closed
  mid-match: the client follows again from its last event id, in the same
  seat, and ends up with every event its seat may see, none twice;
- solo Yatzy, Bozó training (with the cup) and Bozu Mekuri against the CPU
  on tokens that expire every few seconds, refreshed as it goes;
- table chat typed at the keyboard reaching the other player, and theirs
  shown in the log;
- Nim, a game this client has no board for, listed in the lobby and played
  to the end on the generic board.

Every board is checked to fit the screen whenever it is the client's turn."""

from __future__ import annotations

import asyncio
import re
import secrets
from collections import defaultdict
from pathlib import Path
from typing import Any

import grpc
from rodada.common.v1 import match_pb2
from rodada.domino.v1 import domino_pb2 as dm
from rodada.dudo.v1 import dudo_pb2 as d
from rodada.nim.v1 import nim_pb2
from rodada.platform.v1 import platform_pb2 as p
from rodada.platform.v1 import platform_pb2_grpc, social_pb2, social_pb2_grpc
from textual.widgets import RichLog

from clients.terminal.app import RodadaTerminal
from tests.integration.grpc_client import bearer, feed_events, follow_table, unpack
from tests.terminal.bots import guest, play
from tests.terminal.driving import (
    SIZE,
    board,
    choose_game,
    create_table,
    fits,
    log_in_as_guest,
    move,
    my_turn,
    open_table_and_start,
    playing,
    row,
    screen,
    sign_up,
    table_screen,
    until,
)
from tools.stack import Stack

FINISHED = match_pb2.MATCH_STATUS_FINISHED


def dudo_move(snap: match_pb2.Snapshot) -> d.Action:
    """A plain player: open with one of its most common face, raise a low
    bid by one, otherwise call Dudo."""
    view = unpack(snap.view, d.View)
    if not view.HasField("current_bid"):
        face = max(range(2, 7), key=lambda f: sum(1 for x in view.my_dice if x in (f, 1)))
        return d.Action(bid=d.Bid(quantity=1, face=face))
    standing = view.current_bid
    if standing.quantity < 2 and standing.quantity + 1 <= view.dice_in_play:
        return d.Action(bid=d.Bid(quantity=standing.quantity + 1, face=standing.face))
    return d.Action(dudo=d.Dudo())


def domino_move(snap: match_pb2.Snapshot) -> dm.Action:
    """The first tile that fits, on the left end when it fits both."""
    playable = unpack(snap.view, dm.View).playable[0]
    end = dm.LEFT if playable.end_required else dm.END_UNSPECIFIED
    return dm.Action(play=dm.Play(tile=playable.tile, end=end))


def game_events(events: list[match_pb2.MatchEvent], event_cls: Any) -> list[tuple[str, Any]]:
    bodies = [unpack(e.event, event_cls) for e in events if e.WhichOneof("body") == "event"]
    return [(kind, getattr(body, kind)) for body in bodies if (kind := body.WhichOneof("event"))]


async def whole_feed(api: platform_pb2_grpc.PlatformServiceStub, token: str, table_id: str) -> list[int]:
    """The ids of every event a seat may see, read afresh from the start."""
    return [e.id for e in feed_events([item async for item in follow_table(api, token, table_id)])]


async def test_a_complete_dudo_game_against_two_grpc_players(stack: Stack) -> None:
    address = stack.platform_grpc()
    app = RodadaTerminal(address)
    async with grpc.aio.insecure_channel(address) as channel, app.run_test(size=SIZE) as pilot:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        await sign_up(pilot, f"tess{secrets.token_hex(3)}", "correct horse")
        await choose_game(pilot, "dudo", seats=3)
        table_id, code = await create_table(pilot)
        players = {name: await guest(api, name) for name in ("bia", "caio")}
        for session in players.values():
            await api.JoinTable(p.JoinTableRequest(invite_code=code), metadata=bearer(session.access_token))
        await until(pilot, lambda: "caio" in screen(app), what="the others to sit down")
        bots = {
            name: asyncio.create_task(play(api, s.access_token, table_id, dudo_move))
            for name, s in players.items()
        }
        await pilot.press("s")  # the host starts
        await until(pilot, lambda: playing(app), what="the match")

        seen_last_call: list[tuple[int, str, str]] = []  # (round, player, dice on screen)
        turns = 0
        while await my_turn(pilot):
            view: d.View = board(app).view
            assert await fits(pilot, board(app)), screen(app)
            # My dice face up; the others' hidden, one "?" per die.
            assert row(app, app.conn.user.name)[:16].strip() == "".join(f"[{f}]" for f in view.my_dice)
            for player in view.players:
                name = board(app).snap.seats[player.seat].display_name
                if name in players and not player.out:
                    assert row(app, name)[:16].strip() == "[?]" * player.dice_count, screen(app)
                if name in players and view.HasField("last_reveal"):
                    seen_last_call.append((view.last_reveal.round, name, row(app, name)[16:].split("◀")[0]))
            if turns == 0:
                await move(pilot, "a")  # assisted mode on: the odds of any bid on o
                await pilot.press("o")
                await until(pilot, lambda: re.search(r"\d+ × \d: \d+%", screen(app)) is not None, what="odds")
            elif not view.HasField("current_bid"):
                await move(pilot, "b")  # the bid offered from my own dice
            elif view.current_bid.quantity + 2 <= view.dice_in_play and len(view.round_bids) < 3:
                await move(pilot, "up", "b")  # two more than the standing bid
            else:
                await move(pilot, "d")
            turns += 1

        await until(pilot, lambda: table_screen(app).over, what="the feed's end")
        final = board(app).snap
        assert final.status == FINISHED and "Match over" in screen(app)
        me = app.conn.session
        assert me is not None
        view_now = await api.GetView(p.GetViewRequest(table_id=table_id), metadata=bearer(me.access_token))
        assert view_now.match == final and final.seat == 0
        bot_items = {name: await asyncio.wait_for(task, 30) for name, task in bots.items()}
        mine = table_screen(app).feed.events

    # What each call revealed on screen is what that player had thrown.
    thrown: dict[tuple[int, str], list[int]] = {}
    for name, items in bot_items.items():
        for kind, body in game_events(feed_events(items), d.Event):
            if kind == "dice_rolled":
                thrown[(body.round, name)] = list(body.dice)
    assert seen_last_call and turns >= 3
    for round_no, name, shown in seen_last_call:
        assert shown.split() == [str(f) for f in thrown.get((round_no, name), [])], (round_no, name)
    # The client got its own dice only, and every event its seat may see.
    rolled = [body for kind, body in game_events(mine, d.Event) if kind == "dice_rolled"]
    assert rolled and {body.seat for body in rolled} == {0}
    async with grpc.aio.insecure_channel(address) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        assert [e.id for e in mine] == await whole_feed(api, me.access_token, table_id)


async def test_a_complete_domino_match_found_by_matchmaking_resumes_after_a_disconnect(stack: Stack) -> None:
    address = stack.platform_grpc()
    app = RodadaTerminal(address)
    async with grpc.aio.insecure_channel(address) as channel, app.run_test(size=SIZE) as pilot:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        await log_in_as_guest(pilot, "tess")
        await choose_game(pilot, "domino")
        await pilot.press("f3")
        await until(pilot, lambda: "In the queue" in screen(app), what="the queue")

        async def seat_for(name: str) -> list[p.FollowTableResponse]:
            session = await guest(api, name)
            request = p.FindMatchRequest(game="domino")
            stream = api.FindMatch(request, metadata=bearer(session.access_token), timeout=60)
            updates = [reply.update async for reply in stream]
            return await play(api, session.access_token, updates[-1].matched.table_id, domino_move)

        bots = [asyncio.create_task(seat_for(name)) for name in ("bia", "caio", "davi")]
        await until(pilot, lambda: playing(app), timeout=60, what="a table")
        table_id = table_screen(app).table_id
        seat = board(app).snap.seat
        feed = table_screen(app).feed
        cut_at = 0  # the last event id received before the connection closed
        seats_seen: set[int] = set()
        moves = 0
        while await my_turn(pilot):
            panel = board(app)
            assert await fits(pilot, panel), screen(app)
            seats_seen.add(panel.snap.seat)
            # My tiles face up, the others' as backs.
            hand = " ".join(f"[{t.a}|{t.b}]" for t in panel.view.hand)
            assert f"Hand {hand}" in screen(app)
            for other, count in enumerate(panel.view.hand_counts):
                if other != seat:
                    cell = row(app, panel.snap.seats[other].display_name)
                    assert cell.startswith("▮" * count) and "[" not in cell and "▮" * (count + 1) not in cell
            await move(pilot, "l" if "which end" in screen(app) else "enter")
            moves += 1
            if moves == 2:
                # The network goes: the others play on meanwhile.
                cut_at = feed.last_event_id
                await app.conn.close()
                await until(pilot, lambda: "Reconnected" in screen(app), what="the feed to resume")
        await until(pilot, lambda: table_screen(app).over, what="the feed's end")
        final = board(app).snap
        assert final.status == FINISHED and "Match over" in screen(app) and max(final.scores) >= 50
        bot_items = await asyncio.wait_for(asyncio.gather(*bots), 30)
        me = app.conn.session
        assert me is not None

        assert cut_at, "the match ended before the connection was cut"
        assert seats_seen == {seat}  # the same seat all along
        received = [e.id for e in feed.events]
        # No gap and nothing twice: exactly what the seat's feed holds.
        assert received == await whole_feed(api, me.access_token, table_id)
        # The gap was real: the table was told, and others moved meanwhile.
        notices = [(e.notice.kind, e.notice.seat) for e in feed_events(bot_items[0]) if e.HasField("notice")]
        assert (match_pb2.NOTICE_KIND_DISCONNECTED, seat) in notices
        assert (match_pb2.NOTICE_KIND_RECONNECTED, seat) in notices
        after = [e for e in feed.events if e.id > cut_at]
        assert any(kind == "played" for kind, _ in game_events(after, dm.Event))
        # Hands: each round's own hand only, one a round (a match may end in
        # its first round: a team can reach 50 in one).
        played = game_events(feed.events, dm.Event)
        rounds = sum(kind == "round_started" for kind, _ in played)
        dealt = [body for kind, body in played if kind == "dealt"]
        assert rounds >= 1 and len(dealt) == rounds and {body.seat for body in dealt} == {seat}


async def test_table_chat_from_the_keyboard(stack: Stack) -> None:
    """ "/" opens the chat line; enter sends to the table's players (the
    other player's feed gets it); theirs shows in the log; escape goes back
    to the board, not to the lobby."""
    address = stack.platform_grpc()
    app = RodadaTerminal(address)
    async with grpc.aio.insecure_channel(address) as channel, app.run_test(size=SIZE) as pilot:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        social = social_pb2_grpc.SocialServiceStub(channel)
        await log_in_as_guest(pilot, "tess")
        await choose_game(pilot, "yatzy", seats=2)
        table_id, code = await create_table(pilot)
        bia = await guest(api, "bia")
        await api.JoinTable(p.JoinTableRequest(invite_code=code), metadata=bearer(bia.access_token))
        await until(pilot, lambda: "bia" in screen(app), what="bia to sit down")
        await pilot.press("s")
        await until(pilot, lambda: playing(app), what="the match")

        async def heard(text: str) -> social_pb2.ChatMessage:
            """Bia's feed, until a chat message with ``text``."""
            async for item in follow_table(api, bia.access_token, table_id):
                if item.WhichOneof("item") == "event" and item.event.HasField("chat"):
                    message = unpack(item.event.chat, social_pb2.ChatMessage)
                    if message.text == text:
                        return message
            raise AssertionError(f"the feed ended before {text!r}")

        listening = asyncio.create_task(heard("oi bia, tudo bem?"))
        await pilot.press("slash", *"oi bia, tudo bem?", "enter")
        message = await asyncio.wait_for(listening, 15)
        assert message.sender_name == "tess" and message.channel == social_pb2.CHAT_CHANNEL_TABLE_PLAYERS

        await social.SendTableMessage(
            social_pb2.SendTableMessageRequest(table_id=table_id, text="[b]oi[/b] tess"),
            metadata=bearer(bia.access_token),
        )
        log = table_screen(app).query_one("#log", RichLog)

        def logged() -> str:  # the log's lines as one text (it wraps at its width)
            return "".join("".join(strip.text.split()) for strip in log.lines)

        await until(pilot, lambda: "bia:[b]oi[/b]tess" in logged(), what="bia's message in the log")
        assert "tess:oibia,tudobem?" in logged()  # our own, back on the feed, as written
        await pilot.press("escape")  # leaves the chat line, not the table
        assert playing(app) and board(app).has_focus, screen(app)


async def test_solo_games_and_the_cpu_on_tokens_that_expire(tmp_path: Path) -> None:
    env = {"ACCESS_TOKEN_TTL_SECONDS": "3"}
    with Stack(tmp_path, games=["yatzy", "bozo", "bozu_mekuri"], env=env) as stack:
        app = RodadaTerminal(stack.platform_grpc())
        async with app.run_test(size=SIZE) as pilot:
            await sign_up(pilot, f"solo{secrets.token_hex(3)}", "correct horse")

            await choose_game(pilot, "yatzy", seats=1)
            await open_table_and_start(pilot)
            while await my_turn(pilot):
                assert await fits(pilot, board(app)), screen(app)
                await move(pilot, "r")
                if board(app).view.round <= 2:
                    kept = list(board(app).view.dice)[:2]
                    await move(pilot, "1", "2", "r")  # keep the first two dice, throw the rest
                    assert list(board(app).view.dice)[:2] == kept
                await move(pilot, "down", "s")
            await until(pilot, lambda: table_screen(app).over, what="Yatzy's end")
            assert sum(c.total for c in board(app).view.cards) == board(app).snap.result.scores[0]

            await pilot.press("escape")
            await choose_game(pilot, "bozo")  # solo: one seat
            await open_table_and_start(pilot)
            cups = 0
            while await my_turn(pilot):
                assert await fits(pilot, board(app)), screen(app)
                if board(app).view.turn % 2:
                    await move(pilot, "u")  # with the cup: hidden from everyone, me included
                    assert "[?]" in screen(app) and "Under the cup" in screen(app)
                    await move(pilot, "e")  # read from below
                    cups += 1
                else:
                    await move(pilot, "t")
                await move(pilot, "s")
            await until(pilot, lambda: table_screen(app).over, what="Bozó's end")
            assert cups == 5 and board(app).snap.result.reason == match_pb2.END_REASON_COMPLETED

            await pilot.press("escape")
            # Three seats: Semimaru knocks one player out (the default rule), which
            # would end a two-seat game after a single flip.
            await choose_game(pilot, "bozu_mekuri", seats=3, cpu="1 2")
            await open_table_and_start(pilot)
            flips: defaultdict[bool, int] = defaultdict(int)
            while await my_turn(pilot):
                assert await fits(pilot, board(app)), screen(app)
                stop = board(app).view.can_stop and flips[True] % 2 == 1
                flips[board(app).view.extra_flip_offered] += 1
                await move(pilot, "s" if stop else "f")
            await until(pilot, lambda: table_screen(app).over, what="Bozu Mekuri's end")
            me = board(app).view.seats[board(app).snap.seat]
            assert "Match over" in screen(app) and (sum(flips.values()) >= 5 or me.eliminated), screen(app)

            # Each token lived 3 s; the client refreshed before each ran out.
            assert app.conn.refreshes >= 3


def nim_move(snap: match_pb2.Snapshot) -> nim_pb2.Action:
    """The bot takes one stone."""
    return nim_pb2.Action(take=nim_pb2.Take(stones=1))


async def test_nim_on_the_generic_board(stack: Stack) -> None:
    """Nim (tests/games/nim) has no board in this client: the lobby lists it
    (every game the gateway reports), and it is played to the end on the
    generic board — its view as fields, its legal moves as a list walked
    with the arrows and played with Enter — against a gRPC player."""
    stack.service("nim")
    address = stack.platform_grpc()
    app = RodadaTerminal(address)
    async with grpc.aio.insecure_channel(address) as channel, app.run_test(size=SIZE) as pilot:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        await log_in_as_guest(pilot, "tess")
        await choose_game(pilot, "nim", seats=2)
        table_id, code = await create_table(pilot)
        bia = await guest(api, "bia")
        await api.JoinTable(p.JoinTableRequest(invite_code=code), metadata=bearer(bia.access_token))
        await until(pilot, lambda: "bia" in screen(app), what="bia to sit down")
        bot = asyncio.create_task(play(api, bia.access_token, table_id, nim_move))
        await pilot.press("s")
        await until(pilot, lambda: playing(app), what="the match")
        turns = 0
        while await my_turn(pilot):
            panel = board(app)
            assert await fits(pilot, panel), screen(app)
            heap = panel.view.heap
            assert f"heap: {heap}" in screen(app) and "Your move" in screen(app), screen(app)
            assert "take · stones 1" not in screen(app) and "take stones 1" in screen(app), screen(app)
            # The list: take 1, 2, 3 (as many as the heap allows); the last one.
            offered = min(3, heap)
            await move(pilot, *["down"] * (offered - 1), "enter")
            turns += 1
        await until(pilot, lambda: table_screen(app).over, what="the end")
        assert "Match over" in screen(app), screen(app)
        final = board(app).snap
        await asyncio.wait_for(bot, 30)
    assert turns >= 3 and final.status == FINISHED
    assert sorted(final.result.ranks) == [1, 2]
