"""Every JSON body the HTTP API takes is decoded strictly: text no reply or
message could carry (a lone UTF-16 surrogate, which the standard json
module lets through) is a 422 ``invalid_request`` on every operation, never
a 500 from deep inside protobuf."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.http_client import register
from tools.stack import Stack

# JSON text (escapes as a client would send them) that json.loads accepts and
# UTF-8 cannot encode.
LONE_SURROGATE = '{"name": "a\\ud800b", "seats": 1, "options": {"card": "\\udfff"}}'
JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with Stack(tmp_path_factory.mktemp("bodies"), games=["yatzy"]) as stack:
        stack.gateway()
        yield stack


def operations_with_bodies(document: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (method.upper(), path)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict)
        and "application/json" in operation.get("requestBody", {}).get("content", {})
    ]


async def test_a_lone_surrogate_is_refused_by_every_operation_that_takes_a_body(stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as http:
        document = (await http.get("/openapi.json")).json()
        operations = operations_with_bodies(document)
        assert len(operations) >= 10, operations  # sign-up, tables, actions, matchmaking, chat…
        player = await register(http, "surrogate")
        headers = {**JSON, **player.headers}
        for method, path in operations:
            url = path.replace("{", "").replace("}", "")  # any id: the body is refused first
            reply = await http.request(method, url, content=LONE_SURROGATE, headers=headers)
            assert reply.status_code == 422, (method, path, reply.status_code, reply.text)
            assert reply.json()["error"]["code"] == "invalid_request", (method, path, reply.text)


async def test_a_table_with_a_lone_surrogate_in_its_options_is_refused(stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=stack.gateway(), timeout=15) as http:
        player = await register(http, "surrogate2")
        body = '{"game": "yatzy", "seats": 1, "options": {"card": "\\ud800"}}'
        reply = await http.post("/v1/tables", content=body, headers={**JSON, **player.headers})
        assert reply.status_code == 422 and reply.json()["error"]["code"] == "invalid_request", reply.text
        # The same table with the option well formed is created.
        reply = await http.post(
            "/v1/tables",
            json={"game": "yatzy", "seats": 1, "options": {"card": "CLASSIC"}},
            headers=player.headers,
        )
        assert reply.status_code in (200, 201), reply.text
