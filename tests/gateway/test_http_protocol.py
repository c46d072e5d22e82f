"""The gateway's HTTP protocol: a real uvicorn server on loopback serving
with it, an HTTP/1.1 client (h11) reading what arrives, and the socket's
writes noted on their way to the transport."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import h11
import pytest

from gateway.http_protocol import HttpProtocol
from tests.gateway.served import Recorder, served

writes: list[bytes] = []


class _Recording(HttpProtocol):
    def connection_made(self, transport: Any) -> None:
        super().connection_made(Recorder(transport, writes))


async def app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b'{"answer":42}'
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if scope["path"] == "/streamed":
        await send({"type": "http.response.start", "status": 200, "headers": []})  # chunked
        for part in (b"one", b"two"):
            await asyncio.sleep(0.05)
            await send({"type": "http.response.body", "body": part, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    if scope["path"] == "/unfinished":
        return  # uvicorn closes the connection
    if scope["path"] == "/late":
        await asyncio.sleep(0.2)  # the body a few turns after the head
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
async def port() -> AsyncIterator[int]:
    async with served(app, http=_Recording) as port:
        yield port


class _Client:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.conn = h11.Connection(h11.CLIENT)

    async def get(self, path: str, close: bool = False) -> tuple[h11.Response, bytes, list[float]]:
        """The response, its body and when (loop time) each event arrived."""
        headers = [("host", "test")] + ([("connection", "close")] if close else [])
        self.writer.write(self.conn.send(h11.Request(method="GET", target=path, headers=headers)))
        self.writer.write(self.conn.send(h11.EndOfMessage()))
        response, body, arrived = None, b"", []
        loop = asyncio.get_running_loop()
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                self.conn.receive_data(await asyncio.wait_for(self.reader.read(65536), 5))
                continue
            arrived.append(loop.time())
            if isinstance(event, h11.Response):
                response = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert response is not None
                return response, body, arrived

    def next_request(self) -> None:
        self.conn.start_next_cycle()


async def connect(port: int) -> _Client:
    return _Client(*await asyncio.open_connection("127.0.0.1", port))


async def test_a_response_goes_out_in_one_write_and_the_connection_serves_the_next(port: int) -> None:
    client = await connect(port)
    for _ in range(3):
        writes.clear()
        response, body, _ = await client.get("/")
        assert response.status_code == 200 and body == b'{"answer":42}'
        assert len(writes) == 1  # uvicorn alone writes the head, then the body
        assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n") and writes[0].endswith(b"\r\n\r\n" + body)
        client.next_request()
    client.writer.close()


async def test_a_closing_response_is_written_whole_before_the_close(port: int) -> None:
    client = await connect(port)
    writes.clear()
    response, body, _ = await client.get("/", close=True)
    assert body == b'{"answer":42}' and (b"connection", b"close") in response.headers
    assert len(writes) == 1
    assert await asyncio.wait_for(client.reader.read(), 5) == b""  # then closed
    client.writer.close()


async def test_a_head_whose_body_comes_later_is_not_held_for_it(port: int) -> None:
    client = await connect(port)
    writes.clear()
    _, body, (head_at, *rest) = await client.get("/late")
    assert body == b'{"answer":42}'
    assert rest[0] - head_at >= 0.15  # the head was read ~0.2 s before the body was sent
    assert len(writes) == 2 and writes[1] == body
    client.writer.close()


async def test_a_streamed_response_arrives_part_by_part(port: int) -> None:
    client = await connect(port)
    writes.clear()
    response, body, arrived = await client.get("/streamed")
    assert response.status_code == 200 and body == b"onetwo"
    assert arrived[-1] - arrived[0] >= 0.08  # its parts as they were sent, not at the end
    client.writer.close()


async def test_what_was_written_before_a_close_is_sent_before_it(port: int) -> None:
    """An app that returns after the head: uvicorn closes the connection, and
    the client gets the head, as from uvicorn alone, then the end."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /unfinished HTTP/1.1\r\nhost: test\r\n\r\n")
    received = await asyncio.wait_for(reader.read(), 5)  # to the end
    assert received.startswith(b"HTTP/1.1 200 OK\r\n") and received.endswith(b"\r\n\r\n")
    writer.close()
