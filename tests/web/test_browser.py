"""The reference web client played in headless Chromium (Debian's, driven by
playwright-core from npm: clients/web/tests/browser.mjs). Two browser
contexts play a complete Yatzy duel and a complete Dudo game by clicking, one
of them closing its tab mid-match and coming back to its seat (and, in Dudo,
the other's feed cut as a draining replica would, then resumed); the other
games are played to the end, and a Bozó duel found by matchmaking, and Nim
(a game of the tests' own, with no client code) on the generic board; then the
community (friends, private messages, an invitation to the seat opposite at
a Dominó table, reporting and blocking from the chat, tournaments followed
live to their end, rankings, profiles). Every scenario runs in one browser
on one stack; every request the pages make goes to the gateway. Screenshots
are kept in test-artifacts/browser/ (ignored by git)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

import pytest
from redis.asyncio import Redis

from services.core import keys
from tests.integration.time_travel import rewind_idle
from tests.web import CHROMIUM, DIST, REPO, WEB, admin_account, node, run, tool
from tools.stack import Stack

ARTIFACTS = REPO / "test-artifacts" / "browser"


# Yatzy and Dudo: two players; the others: one player (Bozó's solo, CPUs in
# Bozu Mekuri and Dominó), checking each game's own information is shown;
# then accounts, matchmaking and the rules pages; then the community:
# friends, messages, a Dominó invite, reporting and blocking, tournaments.
# Nim has no client code: the generic board plays it.
SCENARIOS = ["yatzy", "dudo", "bozo", "bozu_mekuri", "domino", "matchmaking", "nim", "community"]


@pytest.fixture(scope="module")
def played(stack: Stack) -> dict[str, dict[str, Any]]:
    """Every scenario, played once in one browser (launching Chromium costs
    seconds on a shared machine): its outcome by name."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make debian-tools` (Debian's chromium)")
    if not (DIST / "index.html").exists():
        pytest.fail(f"{DIST} has no site: run `make web`")
    tool("tsc")  # the web client's node_modules, where playwright-core is
    stack.services()
    gateway = stack.gateway()
    env = dict(os.environ)
    env["ADMIN_USER"], env["ADMIN_PASSWORD"] = admin_account(stack.redis_url, gateway)
    done = run([node(), "tests/browser.mjs", gateway, str(ARTIFACTS), *SCENARIOS], timeout=1800, env=env)
    outcomes = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            outcome = json.loads(line)
            outcomes[outcome["scenario"]] = outcome
    assert outcomes, done.stdout + done.stderr
    return outcomes


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_two_browsers_play_to_the_end(played: dict[str, dict[str, Any]], scenario: str) -> None:
    outcome = played.get(scenario)
    assert outcome is not None, f"{scenario} never reported"
    assert "error" not in outcome, outcome["error"]
    assert outcome["foreign"] == [], f"requests outside the gateway: {outcome['foreign']}"
    if scenario == "matchmaking":
        assert outcome["table"], outcome  # both players at one table
    elif scenario == "community":
        assert outcome["standings"] == ["1", "2"] and outcome["actions"] >= 2, outcome
    else:
        places = [int(place) for place, _ in outcome["result"]]
        assert places[0] == 1 and places == sorted(places), outcome  # the placings shown, in order
    if scenario in ("yatzy", "dudo"):
        assert outcome["reconnected"] and len(outcome["result"]) == 2, outcome
    if scenario == "yatzy":
        assert outcome["chat"], outcome
    if scenario == "dudo":  # a feed cut mid-match resumed after the last event it had
        assert outcome["resumedFrom"] > 0, outcome
    for path in outcome["screenshots"]:
        assert (ARTIFACTS / path.rsplit("/", 1)[-1]).stat().st_size > 0
    names = ", ".join(path.rsplit("/", 1)[-1] for path in outcome["screenshots"])
    print(
        f"\n{scenario} in the browser: {outcome['seconds']:.1f} s wall, {outcome.get('actions', 0)} actions;"
        f" screenshots in {ARTIFACTS}: {names}"
    )


async def test_an_idle_seat_is_claimed_from_the_browser(stack: Stack) -> None:
    """Dudo: the seat to act does nothing; once its time has run out (made
    so here, not waited for) the table's feed says so and the other player's
    page offers the claim, which removes the idle seat and ends the match."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make debian-tools` (Debian's chromium)")
    stack.service("dudo")
    gateway = stack.gateway()
    browser = await asyncio.create_subprocess_exec(
        node(),
        "tests/browser.mjs",
        gateway,
        str(ARTIFACTS),
        "claim",
        cwd=WEB,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert browser.stdout is not None and browser.stdin is not None
        line = await asyncio.wait_for(browser.stdout.readline(), 120)
        assert line, (await browser.stderr.read()).decode() if browser.stderr else "no output"
        waiting = json.loads(line)
        redis = Redis.from_url(stack.redis_url, decode_responses=True)
        try:
            await rewind_idle(redis, waiting["waiting"], 121)
            # The deadline set at that version is due now, as far as the clocks know.
            member = keys.clock_member(waiting["waiting"], waiting["version"])
            group = keys.clocks("dudo", keys.group(waiting["waiting"]))
            await redis.zadd(group, {member: time.time() - 1})
        finally:
            await redis.aclose()
        browser.stdin.write(b"go\n")
        await browser.stdin.drain()
        out, err = await asyncio.wait_for(browser.communicate(), 180)
    finally:
        if browser.returncode is None:
            browser.kill()
            await browser.wait()
    assert browser.returncode == 0, (out + err).decode()
    outcome = json.loads(out.decode().strip().splitlines()[-1])
    assert outcome["scenario"] == "claim"
    # The claimer is left alone in the match: first.
    place, line = outcome["result"][0]
    assert place == "1" and outcome["claimedBy"] in line, outcome
