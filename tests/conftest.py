"""Session fixtures: the real platform (see tools/stack.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tools.stack import Stack

# The product's games and the one that exists only for the tests (Nim).
TEST_PACKAGES = ("services", "tests.games")


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with Stack(tmp_path_factory.mktemp("stack"), packages=TEST_PACKAGES) as stack:
        yield stack
