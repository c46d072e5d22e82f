"""The web client's Dudo bid box offers exactly the game's legal bids: its
rules (clients/web/src/app/games/dudo_bids.ts, bundled by esbuild and run
in node) give the same bids as the game's own ``legal_bids`` for every
standing bid, dice count and variant."""

from __future__ import annotations

import json
import subprocess

from services.dudo.bids import legal_bids
from tests.web import WEB, node, tool

CHECK = """
import { lowestBids } from "./src/app/games/dudo_bids.ts";
const cases = JSON.parse(process.argv.at(-1));
const bids = cases.map(([standing, inPlay, palifico, openOnOnes]) => {
  const bid = standing && { quantity: standing[0], face: standing[1] };
  const lowest = lowestBids(bid, inPlay, palifico, openOnOnes);
  return [...lowest].flatMap(([face, q]) => Array.from({ length: inPlay - q + 1 }, (_, i) => [q + i, face]));
});
console.log(JSON.stringify(bids));
"""


def test_the_bid_box_offers_the_games_legal_bids() -> None:
    cases = [
        (standing, in_play, palifico, open_on_ones)
        for in_play in range(1, 13)
        for standing in [None, *((q, f) for q in range(1, in_play + 1) for f in range(1, 7))]
        for palifico in (False, True)
        for open_on_ones in (False, True)
    ]
    script = subprocess.run(
        [tool("esbuild"), "--bundle", "--platform=node", "--format=esm", "--loader=ts", "--log-level=error"],
        input=CHECK,
        cwd=WEB,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    done = subprocess.run(
        [node(), "--input-type=module", "-e", script, json.dumps(cases)],
        cwd=WEB,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    offered = json.loads(done.stdout)
    assert len(offered) == len(cases)
    for case, bids in zip(cases, offered, strict=True):
        expected = sorted(legal_bids(*case))
        assert sorted(map(tuple, bids)) == expected, case
    # The positions checked include ones where no raise is left.
    assert any(not bids for bids in offered)
