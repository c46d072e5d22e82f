"""``python -m services.kit.prepare``: every game's work before serving (its
declaration's ``prepare``, such as Yatzy's and Bozó's advisor tables), done
ahead of time — in an image, before tests or a benchmark — for every game
found in GAME_PACKAGES, none named. A service does it anyway before its
port opens; done here, that finds it ready."""

from __future__ import annotations

import os
import sys
import time

from services.kit.game import discover, packages_from


def main() -> int:
    games = discover(packages_from(os.environ.get("GAME_PACKAGES", "")))
    for game in games.values():
        if game.prepare is None:
            continue
        began = time.perf_counter()
        game.prepare()
        print(f"{game.name}: prepared in {time.perf_counter() - began:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
