"""The feeds' WebSocket protocol: its inbox behaves as the asyncio.Queue it
replaces, as uvicorn uses it (put_nowait, get, empty), holding nothing while
idle; its writable gate as the asyncio.Event; the frames it writes itself
are wsproto's."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gateway.feed_protocol import FeedProtocol, Gate, Inbox, text_frame
from tests.gateway.served import Recorder, served


def event(n: int) -> Any:
    return {"type": "websocket.receive", "text": str(n)}


async def test_first_in_first_out_and_empty_when_drained() -> None:
    inbox = Inbox()
    assert inbox.empty()
    for n in range(3):
        inbox.put_nowait(event(n))
    assert not inbox.empty()
    assert [await inbox.get() for _ in range(3)] == [event(0), event(1), event(2)]
    assert inbox.empty()
    assert inbox._items is None  # an idle socket holds no deque


async def test_a_reader_waits_for_the_next_item() -> None:
    inbox = Inbox()
    reader = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)
    assert not reader.done()
    inbox.put_nowait(event(1))
    inbox.put_nowait(event(2))
    assert await reader == event(1)
    assert await inbox.get() == event(2)


async def test_a_reader_that_gives_up_leaves_the_inbox_working() -> None:
    inbox = Inbox()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(inbox.get(), 0.01)
    inbox.put_nowait(event(1))
    assert await asyncio.wait_for(inbox.get(), 1) == event(1)


# -- the direct frame writes and the writable gate ---------------------------------


@pytest.mark.parametrize("size", [0, 1, 125, 126, 1_000, 65_535, 65_536, 200_000])
def test_a_text_frame_is_the_one_wsproto_would_send(size: int) -> None:
    """Short (7-bit), 126 (16-bit) and 127 (64-bit) length headers, byte for
    byte what wsproto's own server-side encoder makes (no extensions)."""
    from wsproto.frame_protocol import FrameProtocol

    text = "é" * (size // 2) + "a" * (size % 2)  # the length is in bytes, not characters
    assert len(text.encode()) == size
    expected = bytes(FrameProtocol(client=False, extensions=[]).send_data(text, fin=True))
    assert text_frame(text) == expected


def test_the_same_text_is_framed_once_and_another_anew() -> None:
    text = "".join(["{", '"event":1', "}"])  # a str object of its own
    first = text_frame(text)
    assert text_frame(text) is first  # the same object: the frame kept
    equal = "".join(["{", '"event":1', "}"])
    assert equal is not text and text_frame(equal) == first  # equal text: an equal frame
    assert text_frame("other") == b"\x81\x05other"
    assert text_frame(text) == first


def test_a_fan_outs_items_taken_in_turn_are_each_framed_once() -> None:
    """A move's event and each audience's snapshot, feed after feed."""
    from gateway.feed_protocol import FRAMES_KEPT

    texts = ["".join(["{", f'"item":{n}', "}"]) for n in range(FRAMES_KEPT)]
    frames = [text_frame(text) for text in texts]
    for _ in range(3):
        assert all(text_frame(text) is frame for text, frame in zip(texts, frames, strict=True))
    text_frame("one more")  # the oldest goes
    assert text_frame(texts[0]) is not frames[0] and text_frame(texts[0]) == frames[0]


def test_a_frame_header_says_the_size_in_the_shortest_form() -> None:
    assert text_frame("a" * 125)[:2] == b"\x81\x7d"
    assert text_frame("a" * 126)[:4] == b"\x81\x7e\x00\x7e"
    assert text_frame("a" * 65_536)[:10] == b"\x81\x7f" + (65_536).to_bytes(8, "big")


async def test_the_gate_opens_for_every_waiter() -> None:
    gate = Gate()
    assert gate.is_set()
    await asyncio.wait_for(gate.wait(), 1)  # open: no wait
    gate.clear()
    assert not gate.is_set()
    waiters = [asyncio.create_task(gate.wait()) for _ in range(3)]
    await asyncio.sleep(0)
    assert not any(w.done() for w in waiters)
    gate.set()
    await asyncio.wait_for(asyncio.gather(*waiters), 1)
    assert gate._waiter is None  # nothing held once open


async def test_a_waiter_that_gives_up_leaves_the_others_waiting() -> None:
    gate = Gate()
    gate.clear()
    quitter = asyncio.create_task(gate.wait())
    stayer = asyncio.create_task(gate.wait())
    await asyncio.sleep(0)
    quitter.cancel()
    await asyncio.sleep(0)
    assert quitter.cancelled()
    assert not stayer.done()
    gate.set()
    await asyncio.wait_for(stayer, 1)


def test_only_our_protocol_is_found_behind_a_send() -> None:
    async def send(message: Any) -> None:
        pass

    class Other:
        async def send(self, message: Any) -> None:
            pass

    assert FeedProtocol.of(send) is None
    assert FeedProtocol.of(Other().send) is None
    protocol = FeedProtocol.__new__(FeedProtocol)  # no server needed to find it
    assert FeedProtocol.of(protocol.send) is protocol


def test_per_feed_objects_have_slots() -> None:
    """Tens of thousands of each live on a gateway: no __dict__ (about 100
    bytes more each, and a dict that grows)."""
    from gateway.feeds import _Open
    from gateway.social.chat import ChatSight
    from gateway.sockets import Outgoing
    from services.core.feeds import Item, Listener, Viewer

    for kind in (Inbox, Gate, Outgoing, Item, Listener, ChatSight):
        assert "__slots__" in vars(kind), kind
        assert not hasattr(kind.__new__(kind), "__dict__"), kind
    assert not hasattr(Viewer(None), "__dict__")
    assert not hasattr(_Open("u", "t", False), "__dict__")


async def test_the_frames_of_one_turn_go_out_in_one_write_before_what_uvicorn_sends_next() -> None:
    """A real uvicorn server on loopback, its feeds' protocol ours, and a
    WebSocket client reading what arrives."""
    from wsproto import ConnectionType, WSConnection
    from wsproto.events import AcceptConnection, Request, TextMessage

    writes: list[list[bytes]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            return
        await receive()  # the connect
        await send({"type": "websocket.accept"})
        protocol = FeedProtocol.of(send)
        assert protocol is not None
        recorder = Recorder(protocol.transport, [])
        protocol.transport = recorder
        assert all(protocol.write_text(f"one turn {n}") for n in range(3))
        assert recorder.writes == []  # not yet: at the end of the turn
        await asyncio.sleep(0)
        writes.append(recorder.writes[:])
        assert protocol.write_text("corked")
        await send({"type": "websocket.send", "text": "through uvicorn"})  # after "corked", not before
        writes.append(recorder.writes[len(writes[0]) :])
        await receive()  # until the client goes

    async with served(app, ws=FeedProtocol) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        client = WSConnection(ConnectionType.CLIENT)
        writer.write(client.send(Request(host=f"127.0.0.1:{port}", target="/feed")))
        texts: list[str] = []
        accepted = False
        while len(texts) < 5:
            client.receive_data(await asyncio.wait_for(reader.read(65536), 5))
            for got in client.events():
                if isinstance(got, AcceptConnection):
                    accepted = True
                elif isinstance(got, TextMessage):
                    texts.append(got.data)
        assert accepted
        assert texts == ["one turn 0", "one turn 1", "one turn 2", "corked", "through uvicorn"]
        first, second = writes
        assert first == [b"".join(text_frame(f"one turn {n}") for n in range(3))]
        assert second[0] == text_frame("corked") and len(second) == 2  # then uvicorn's frame
        writer.close()
