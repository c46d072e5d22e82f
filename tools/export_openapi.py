"""Write the gateway's OpenAPI document to a file without running anything:
the games' facts and messages come from their declarations (``services/<game>/
game.py``), as a running gateway learns them from each game's Describe (its
messages from the descriptors Describe sends, as the gateway builds them). The
Makefile feeds it to openapi-typescript for the web client's types.

    python -m tools.export_openapi clients/web/src/api/openapi.json
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, cast

from gateway.app import create_app
from gateway.games import GameClient, game_messages
from gateway.openapi import build_openapi
from gateway.settings import GatewaySettings
from services.kit.game import discover, packages_from


class DeclaredGames:
    """The part of gateway.games.Games the documents read: the games described."""

    def __init__(self) -> None:
        games = discover(packages_from(os.environ.get("GAME_PACKAGES", "")))
        self.names = sorted(games)
        self._described = [
            GameClient(info, game_messages(info), cast(Any, None))
            for info in (game.info() for _, game in sorted(games.items()))
        ]

    def described(self) -> list[GameClient]:
        return self._described


def document() -> dict[str, Any]:
    app = create_app(GatewaySettings(web_dir=""))
    openapi, _ = build_openapi(app, cast(Any, DeclaredGames()))
    return openapi


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tools.export_openapi OUT.json", file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
