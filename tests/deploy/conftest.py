"""A platform of its own for the deploy tests: Redis, the gateway and the
Yatzy service only (the metrics and the image's health check need one game,
and no other game's state of conversion should decide these tests)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tools.stack import Stack


@pytest.fixture(scope="session")
def yatzy_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with Stack(tmp_path_factory.mktemp("deploy-stack"), packages=("services",), games=("yatzy",)) as stack:
        yield stack
