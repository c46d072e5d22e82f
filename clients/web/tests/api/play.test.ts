/** Play and the table feed: a Bozó duel followed to its end through a cut and a stalled connection; stale versions; questions. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { TableFeed } from "../../src/api/feed";
import type { MatchEvent, Snapshot } from "../../src/api/types";
import { QUICK, guest, me, playBozo, refused, sockets, until } from "./harness";

/** What a feed delivered, in order. */
class Watched {
  events: MatchEvent[] = [];
  snapshots: Snapshot[] = [];
  tables = 0;
  connected: boolean[] = [];
  retries = 0;
  ended: string | null = null;
  feed!: TableFeed;
}

function watch(player: Awaited<ReturnType<typeof guest>>, tableId: string, afterEventId = 0): Watched {
  const seen = new Watched();
  seen.feed = player.followTable(
    tableId,
    {
      event: (event) => seen.events.push(event),
      snapshot: (snapshot) => seen.snapshots.push(snapshot),
      table: () => (seen.tables += 1),
      connected: (resumed) => seen.connected.push(resumed),
      disconnected: (_code, _reason, retry) => (seen.retries += retry === null ? 0 : 1),
      end: (reason) => (seen.ended = reason),
    },
    afterEventId,
    QUICK,
  );
  return seen;
}

test("a Bozó duel followed to its end; a cut and a stalled connection resume with nothing lost or repeated", async () => {
  const [ana, bia] = await Promise.all([guest(), guest()]);
  const table = await ana.createTable("bozo", 2, { mode: "DUEL" });
  await bia.join(table.invite_code);
    const anas = watch(ana, table.id);
  const bias = watch(bia, table.id);
  // Before the start a feed draws from the table; presence counts both feeds.
  await until("the lobby on both feeds", () => anas.tables > 0 && bias.tables > 0);
  const present = await until("both present", async () => {
    const connected = await ana.presence(table.id);
    return connected.length === 2 && connected;
  });
  assert.deepEqual([...present].sort(), [me(ana), me(bia)].sort());

  const started = await ana.start(table.id);
  const stale = await refused(ana.act(table.id, started.version - 1, { throw: { cup: false, keep: [] } }));
  assert.equal(stale.status, 409);
  assert.equal(stale.code, "stale_version");
  const wrongTurn = await refused(bia.act(table.id, started.version, { throw: { cup: false, keep: [] } }));
  assert.equal(wrongTurn.code, "not_your_turn");

  // Some turns, then Ana's connection is cut (as a network would), later stalled (no close at all).
  const players = new Map([
    [me(ana), ana],
    [me(bia), bia],
  ]);
  const playing = playBozo(players, table.id);
  await until("some events", () => anas.events.length >= 6, 60_000, 10);
  sockets(ana)[0].terminate();
  await until("Ana back after the cut", () => anas.connected.length === 2, 20_000, 20);
  const cutAt = anas.events.length;
  await until("events after the cut", () => anas.events.length >= cutAt + 4, 60_000, 10);
  sockets(ana)[1].pause(); // nothing read any more, nothing closed: only the keepalive can tell
  await until("Ana back after the stall", () => anas.connected.length === 3, 20_000, 20);
  const final = await playing;
  assert.deepEqual(anas.connected, [false, true, true]);
  assert.ok(anas.retries >= 2);

  assert.equal(final.status, "MATCH_STATUS_FINISHED");
  assert.equal(final.result?.ranks.length, 2);
  await until("both feeds ended", () => anas.ended !== null && bias.ended !== null);
  assert.equal(anas.ended, "finished");
  assert.ok(anas.feed.closed && bias.feed.closed);
  assert.equal(anas.snapshots[anas.snapshots.length - 1].status, "MATCH_STATUS_FINISHED");
  assert.ok(anas.events.some((e) => e.final));

  // Everything Ana's cut and stalled feed delivered is exactly what a fresh feed from the start delivers.
  const replay = watch(ana, table.id);
  await until("the replay's end", () => replay.ended !== null);
  const ids = (w: Watched) => w.events.map((e) => e.id);
  assert.deepEqual(ids(anas), ids(replay));
  assert.deepEqual(
    ids(anas),
    [...new Set(ids(anas))].sort((a, b) => a - b),
    "increasing, no repeats",
  );
  // A feed resumed from the middle delivers only what comes after.
  const middle = ids(replay)[Math.floor(replay.events.length / 2)];
  const tail = watch(ana, table.id, middle);
  await until("the tail's end", () => tail.ended !== null);
  assert.deepEqual(
    ids(tail),
    ids(replay).filter((id) => id > middle),
  );
  assert.deepEqual(tail.connected, [true]);
  for (const socket of sockets(ana)) socket.terminate(); // the stalled one would wait 30 s for its close
});

test("a question changes nothing: the Bozó advisor's advice at a solo table", async () => {
  const player = await guest();
  const table = await player.createTable("bozo", 1, { mode: "SOLO", advice: true });
  const snapshot = await player.start(table.id);
  const answer = await player.ask(table.id, { advice: {} });
  assert.equal(answer.version, snapshot.version);
  const advice = answer.answer?.["@type"] === "type.googleapis.com/rodada.bozo.v1.Answer" ? answer.answer.advice : null;
  assert.ok(advice && advice.options.length > 0, "advised actions");
  assert.ok(advice.expected_final_score > 0);
  assert.equal((await player.view(table.id)).version, snapshot.version);
  const refusal = await refused(player.ask(table.id, { bid_odds: { face: 2, quantity: 1 } }));
  assert.equal(refusal.status, 422);
});

test("a feed refused for good says why and does not reconnect", async () => {
  const player = await guest();
  const said: string[] = [];
  let closed: [number, string] | null = null;
  let retries = 0;
  player.followTable(
    "no_such_table",
    {
      refused: (error) => said.push(error.code),
      closed: (code, reason) => (closed = [code, reason]),
      disconnected: (_code, _reason, retry) => (retries += retry === null ? 0 : 1),
    },
    0,
    QUICK,
  );
  const [code, reason] = await until("the refusal", () => closed ?? undefined);
  assert.equal(code, 4404);
  assert.equal(reason, "table_not_found");
  assert.deepEqual(said, ["table_not_found"]);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  assert.equal(retries, 0);
  assert.equal(sockets(player).length, 1);
});
