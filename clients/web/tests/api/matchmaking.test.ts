/**
 * Matchmaking and parties, and the ticket feed; then what a ranked match
 * leaves behind: ratings, their history, match histories, the leaderboard,
 * the league and trophies.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { TicketUpdate } from "../../src/api/types";
import { QUICK, guest, me, refused, registered, until } from "./harness";

test("a ticket waits in the queue, is read, and is cancelled", async () => {
  const player = await guest();
  // Dudo's queue makes tables of several sizes: alone, the ticket waits.
  const ticket = await player.findMatch("dudo", { dice_per_player: 4 });
  assert.equal(ticket.game, "dudo");
  assert.equal(ticket.members[0].id, me(player));
  const updates: TicketUpdate[] = [];
  const feed = player.followTicket(ticket.id, { update: (u) => updates.push(u) }, QUICK);
  const queued = await until("the queue's word", () => updates.find((u) => "queue" in u));
  assert.ok("queue" in queued && queued.queue.position === 1 && queued.queue.queue_length >= 1);
  assert.equal((await player.ticket(ticket.id)).state, "waiting");
  const twice = await refused(player.findMatch("dudo", { dice_per_player: 4 }));
  assert.equal(twice.code, "already_queued");
  await player.cancelTicket(ticket.id);
  const closed = await until("the ticket closed", () => updates.find((u) => "closed" in u));
  assert.ok("closed" in closed && closed.closed.state === "cancelled");
  assert.equal((await player.ticket(ticket.id)).state, "cancelled");
  await until("the feed over", () => feed.closed);
});

test("a party of two queues as one ticket and is matched with another party", async () => {
  const [ana, bia, caio, duda] = await Promise.all([guest(), guest(), guest(), guest()]);
  const ours = await ana.findMatch("domino", {}, false, true);
  assert.ok(ours.party && ours.party_code);
  const joined = await bia.joinParty(ours.party_code);
  assert.equal(joined.id, ours.id);
  assert.deepEqual(joined.members.map((m) => m.id).sort(), [me(ana), me(bia)].sort());
  const theirs = await caio.findMatch("domino", {}, false, true);
  await duda.joinParty(theirs.party_code);

  const matched = new Map<string, TicketUpdate>();
  const follow = (player: typeof ana, ticketId: string) =>
    player.followTicket(ticketId, {
      update: (u) => {
        if ("matched" in u) matched.set(me(player), u);
      },
    });
  const feeds = [follow(ana, ours.id), follow(bia, ours.id), follow(caio, theirs.id), follow(duda, theirs.id)];
  await until("all four matched", () => matched.size === 4, 30_000);
  const seats = new Map([...matched].map(([user, u]) => [user, "matched" in u ? u.matched : null]));
  const tables = new Set([...seats.values()].map((m) => m?.table_id));
  assert.equal(tables.size, 1, "one table");
  // Partners sit opposite each other: seats 0 & 2 or 1 & 3.
  assert.equal(Math.abs((seats.get(me(ana))?.seat ?? 0) - (seats.get(me(bia))?.seat ?? 0)), 2);
  assert.equal(Math.abs((seats.get(me(caio))?.seat ?? 0) - (seats.get(me(duda))?.seat ?? 0)), 2);
  const ticket = await ana.ticket(ours.id);
  assert.equal(ticket.state, "matched");
  assert.equal(ticket.table_id, [...tables][0]);
  await until("the feeds over", () => feeds.every((f) => f.closed));
});

test("a ranked duel found by matchmaking moves ratings and fills histories, the leaderboard and the league", async () => {
  const [ana, bia] = await Promise.all([registered("ana"), registered("bia")]);
  const tickets = await Promise.all([
    ana.findMatch("bozo", { mode: "DUEL" }, true),
    bia.findMatch("bozo", { mode: "DUEL" }, true),
  ]);
  const tables: string[] = [];
  for (const [player, ticket] of [
    [ana, tickets[0]],
    [bia, tickets[1]],
  ] as const) {
    player.followTicket(ticket.id, { update: (u) => "matched" in u && tables.push(u.matched.table_id) });
  }
  await until("both matched", () => tables.length === 2, 30_000);
  assert.equal(tables[0], tables[1]);
  const tableId = tables[0];
  assert.equal((await ana.table(tableId)).ranked, true);
  // Bia concedes at once (Bozó's leaving policy): Ana wins.
  await until("started", async () => (await bia.view(tableId).catch(() => null))?.status === "MATCH_STATUS_ACTIVE");
  const left = await bia.leave(tableId);
  assert.equal(left.match?.status, "MATCH_STATUS_FINISHED");

  const history = await until("Ana's history", async () => {
    const page = await ana.matchHistory(me(ana));
    return page.matches.length === 1 && page;
  });
  const entry = history.matches[0];
  assert.equal(entry.match_id, tableId);
  assert.equal(entry.game, "bozo");
  assert.equal(entry.mode, "duel");
  assert.equal(entry.ranked, true);
  assert.equal(entry.rank, 1);
  const bias = await until("Bia's history", async () => (await bia.matchHistory(me(bia), { limit: 5 })).matches[0]);
  assert.equal(bias.forfeited, true);

  const ratings = await until("Ana's rating", async () => {
    const all = await ana.ratings(me(ana));
    return all.find((r) => r.game === "bozo" && r.mode === "duel");
  });
  assert.ok((ratings.rating?.rating ?? 0) > 1500, "the winner gains");
  const changes = await ana.ratingHistory(me(bia), "bozo", "duel");
  assert.equal(changes.history.length, 1);
  const [change] = changes.history;
  assert.equal(change.match_id, tableId);
  assert.ok(change.after && change.before && change.after.rating < change.before.rating, "the loser drops");

  // The whole leaderboard, page by page (other tests' players are on it too).
  const ids: string[] = [];
  for (let offset = 0, total = 1; offset < total; offset += 50) {
    const page = await ana.leaderboard("bozo", "duel", { offset, limit: 50 });
    assert.equal(page.offset, offset);
    ids.push(...page.entries.map((e) => e.user_id));
    total = page.total;
  }
  assert.ok(ids.includes(me(ana)) && ids.includes(me(bia)));
  assert.ok(ids.indexOf(me(ana)) < ids.indexOf(me(bia)), "the winner ranks above");

  const league = await ana.league("bozo", "duel");
  const standings = league.divisions.flatMap((d) => d.standings);
  const anas = standings.find((s) => s.user_id === me(ana));
  const bias_ = standings.find((s) => s.user_id === me(bia));
  assert.ok(anas && bias_ && anas.points > bias_.points);

  const won = await until("Ana's first win", async () =>
    (await bia.trophies(me(ana))).find((t) => t.kind?.id === "first_win"),
  );
  assert.equal(won.match_id, tableId);
  assert.ok(!(await ana.trophies(me(bia))).some((t) => t.kind?.id === "first_win"));
});
