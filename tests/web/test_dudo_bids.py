"""The web client's Dudo bid box offers exactly what the server lists as
legal: the bids, Dudo and calza it reads from a snapshot's ``legal``
(clients/web/src/app/games/dudo_bids.ts, bundled by esbuild and run in node)
are the game's own legal actions, made small by the kit as every snapshot
carries them, for every standing bid, dice count and variant; and the bid it
pre-fills is always one of them (issue 23: it pre-filled a bid the server
refused)."""

from __future__ import annotations

import json
import subprocess

from google.protobuf import json_format

from services.dudo.bids import legal_bids
from services.dudo.game import GAME
from services.kit import legal
from tests.web import WEB, node, tool

CHECK = """
import { readFileSync } from "node:fs";
import { offerOf, suggested } from "./src/app/games/dudo_bids.ts";
const cases = JSON.parse(readFileSync(0, "utf8"));
const offers = cases.map(([snapshotLegal, standing, myDice, palifico]) => {
  const offer = offerOf(snapshotLegal);
  const bid = standing && { quantity: standing[0], face: standing[1] };
  const first = suggested(offer, bid, myDice, palifico);
  return {
    bids: [...offer.bids].flatMap(([face, quantities]) => quantities.map((q) => [q, face])),
    dudo: offer.dudo,
    calza: offer.calza,
    suggested: first && [first.quantity, first.face],
  };
});
console.log(JSON.stringify(offers));
"""


Bid = tuple[int, int]
Case = tuple[dict[str, object], Bid | None, list[int], bool, bool, list[Bid]]


def _cases() -> list[Case]:
    """Each position as the browser gets it: the snapshot's ``legal`` (JSON,
    as the gateway writes it), the standing bid, the seat's dice, palifico,
    calza, and the game's own legal bids there."""
    cases = []
    for in_play in range(1, 13):
        for standing in [None, *((q, f) for q in range(1, in_play + 1) for f in range(1, 7))]:
            for palifico in (False, True):
                for open_on_ones in (False, True):
                    bids = legal_bids(standing, in_play, palifico, open_on_ones)
                    calza = open_on_ones  # the variants vary together: enough to see both answers
                    actions: list[dict[str, object]] = [{"set_assist": {"on": on}} for on in (True, False)]
                    actions += [{"bid": {"quantity": q, "face": f}} for q, f in bids]
                    if standing is not None:
                        actions.append({"dudo": {}})
                        if calza:
                            actions.append({"calza": {}})
                    packed = json_format.MessageToDict(
                        legal.message(GAME, actions), preserving_proto_field_name=True
                    )
                    my_dice = [(in_play * 7 + i * 5) % 6 + 1 for i in range(min(5, in_play))]
                    cases.append((packed, standing, my_dice, palifico, calza, bids))
    return cases


def test_the_bid_box_offers_the_servers_legal_bids() -> None:
    cases = _cases()
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
        [node(), "--input-type=module", "-e", script],
        input=json.dumps([case[:4] for case in cases]),
        cwd=WEB,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    offered = json.loads(done.stdout)
    assert len(offered) == len(cases)
    for (packed, standing, _dice, _palifico, calza, bids), offer in zip(cases, offered, strict=True):
        assert sorted(map(tuple, offer["bids"])) == sorted(bids), (standing, packed)
        assert offer["dudo"] is (standing is not None)
        assert offer["calza"] is (standing is not None and calza)
        # What the box fills in first is a bid the server accepts, or none when none is left.
        if bids:
            assert tuple(offer["suggested"]) in bids, (standing, packed)
        else:
            assert offer["suggested"] is None
    # The positions checked include ones where no raise is left, and the
    # kit's small forms: ranges of quantities and single bids alike.
    assert any(not bids for *_, bids in cases)
    assert any(packed.get("ranges") for packed, *_ in cases)
    assert any("bid" in str(packed.get("actions")) for packed, *_ in cases)
