"""A request's id: the client's X-Request-Id when it gives one (the last, as
a dict of the headers would keep), else 16 new hex digits."""

from __future__ import annotations

import re

from gateway.app import _request_id


def test_the_clients_id_is_kept() -> None:
    assert _request_id([(b"host", b"x"), (b"x-request-id", b"abc-1")]) == "abc-1"
    assert _request_id([(b"x-request-id", b"first"), (b"x-request-id", b"second")]) == "second"


def test_without_one_a_new_id_is_16_hex_digits_each_time() -> None:
    made = {_request_id([(b"host", b"x")]) for _ in range(1000)}
    made.add(_request_id([(b"x-request-id", b"")]))
    assert len(made) == 1001
    assert all(re.fullmatch(r"[0-9a-f]{16}", made_id) for made_id in made)


def test_the_game_services_get_the_token_and_the_request_id() -> None:
    from grpc.aio import Metadata

    from gateway.matches import _metadata
    from services.core import logs

    reset = logs.REQUEST_ID.set("abc-1")
    try:
        assert _metadata("t0k") == Metadata(("authorization", "Bearer t0k"), ("x-request-id", "abc-1"))
    finally:
        logs.REQUEST_ID.reset(reset)
    assert _metadata("t0k") == Metadata(("authorization", "Bearer t0k"))
