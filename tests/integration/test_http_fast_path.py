"""The API's operations reach their handler straight from the server
(gateway.app.FastPath) with everything the full app gives a request: CORS
for a browser's origin, the request metrics by route, the same answers for
what no operation serves (404, 405, the site and the documents)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from tools.stack import Stack

ORIGIN = "http://localhost:5173"  # in the default CORS_ORIGINS
JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with Stack(tmp_path_factory.mktemp("fast"), games=["yatzy"]) as stack:
        stack.gateway()
        yield stack


@pytest.fixture(scope="module")
def gateway(stack: Stack) -> str:
    return stack.gateway()


def requests_counted(stack: Stack, method: str, route: str, status: str) -> float:
    """rodada_http_requests_total{method, route, status} as the gateway's metrics say."""
    wanted = {"method": f'"{method}"', "route": f'"{route}"', "status": f'"{status}"'}
    for line in httpx.get(stack.gateway_metrics_url(), timeout=10).text.splitlines():
        if line.startswith("rodada_http_requests_total{"):
            sample, _, value = line.rpartition(" ")
            labels = dict(part.split("=", 1) for part in sample[sample.index("{") + 1 : -1].split(","))
            if labels == wanted:
                return float(value)
    return 0.0


def test_an_operation_answers_a_browser_with_cors_headers_and_is_measured(stack: Stack, gateway: str) -> None:
    with httpx.Client(base_url=gateway, timeout=10) as client:
        before = requests_counted(stack, "POST", "/v1/auth/guest", "201")
        reply = client.post("/v1/auth/guest", json={"name": "ana"}, headers={"origin": ORIGIN})
        assert reply.status_code == 201, reply.text
        assert reply.headers["access-control-allow-origin"] == ORIGIN
        assert "x-request-id" in reply.headers["access-control-expose-headers"]
        assert requests_counted(stack, "POST", "/v1/auth/guest", "201") == before + 1
        token = reply.json()["access_token"]
        # A path parameter, a refusal and its metrics' route template.
        missing = client.get("/v1/tables/nope/view", headers={"authorization": f"Bearer {token}"})
        assert missing.status_code == 404 and missing.json()["error"]["code"]
        assert requests_counted(stack, "GET", "/v1/tables/{table_id}/view", "404") >= 1


def test_a_foreign_origin_gets_no_cors_grant_and_a_preflight_is_answered(gateway: str) -> None:
    with httpx.Client(base_url=gateway, timeout=10) as client:
        reply = client.post("/v1/auth/guest", json={}, headers={"origin": "http://evil.example"})
        assert reply.status_code == 201
        assert "access-control-allow-origin" not in reply.headers
        preflight = client.options(
            "/v1/tables",
            headers={
                "origin": ORIGIN,
                "access-control-request-method": "POST",
                "access-control-request-headers": "authorization, content-type",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == ORIGIN


def test_what_no_operation_serves_is_answered_by_the_app(gateway: str) -> None:
    with httpx.Client(base_url=gateway, timeout=10) as client:
        wrong_method = client.delete("/v1/auth/guest")
        assert wrong_method.status_code == 405
        assert wrong_method.json()["error"]["code"] == "method_not_allowed"
        unknown = client.get("/v1/no-such-thing")
        assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
        assert client.get("/v1/feeds/asyncapi.json").json()["asyncapi"]  # a document beside the operations
        assert client.get("/healthz").status_code == 200
        bad_body = client.post("/v1/auth/guest", content=b"{", headers=JSON)
        assert bad_body.status_code == 422 and bad_body.json()["error"]["code"] == "invalid_request"


def _answer(sock: socket.socket) -> bytes:
    """One HTTP/1.1 response's head and body off ``sock`` (b"" if it was closed)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head


def test_an_idle_keep_alive_connection_outlives_the_servers_default(gateway: str) -> None:
    """The gateway keeps an idle connection HTTP_KEEPALIVE_SECONDS (75), not
    uvicorn's 5 s: an ingress reusing its upstream connections for up to 60 s
    must not find them closed under a request (a 502)."""
    address = urlsplit(gateway)
    request = b"GET /healthz HTTP/1.1\r\nhost: gateway\r\n\r\n"
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        sock.sendall(request)
        assert _answer(sock).startswith(b"HTTP/1.1 200")
        time.sleep(6.0)  # idle past uvicorn's default keep-alive
        sock.sendall(request)
        assert _answer(sock).startswith(b"HTTP/1.1 200"), "the idle connection was closed"


def test_an_idle_keep_alive_connection_is_closed_after_its_time(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """HTTP_KEEPALIVE_SECONDS is the gateway's: idle past it, the gateway
    closes the connection (here 2 s, waited 3)."""
    with Stack(
        tmp_path_factory.mktemp("keepalive"), games=["yatzy"], env={"HTTP_KEEPALIVE_SECONDS": "2"}
    ) as short:
        address = urlsplit(short.gateway())
        request = b"GET /healthz HTTP/1.1\r\nhost: gateway\r\n\r\n"
        with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
            sock.sendall(request)
            assert _answer(sock).startswith(b"HTTP/1.1 200")
            time.sleep(3.0)
            sock.settimeout(0.5)  # closed by now: uvicorn's own default (5 s) would still hold it open
            assert sock.recv(65536) == b"", "the idle connection is still open"
