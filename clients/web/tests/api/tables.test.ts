/** The lobby: the games, private tables with invites (team invites, revoking), arranging seats, leaving, starting; open tables. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { guest, me, refused } from "./harness";

test("every game describes itself", async () => {
  const games = await (await guest()).games();
  const names = games.map((g) => g.name);
  for (const game of ["bozo", "bozu_mekuri", "domino", "dudo", "yatzy"]) assert.ok(names.includes(game), game);
  const bozo = games.find((g) => g.name === "bozo");
  assert.deepEqual(
    bozo?.modes.map((m) => [m.name, m.seat_counts]),
    [
      ["solo", [1]],
      ["duel", [2]],
      ["duplas", [4]],
    ],
  );
  assert.deepEqual(bozo?.modes[2].teams.map((t) => [t.name, t.seats]), [
    ["JADE", [0, 2]],
    ["AMBAR", [1, 3]],
  ]);
});

test("a private Bozó duplas table: team invites, a revoked invite, seats arranged, a leaver, the start", async () => {
  const [host, bia, caio, duda] = await Promise.all([guest(), guest(), guest(), guest()]);
  const table = await host.createTable("bozo", 4, { mode: "DUPLAS" });
  assert.equal(table.host, me(host));
  assert.equal(table.mode, "duplas");
  assert.equal(table.players[0].user_id, me(host));
  assert.ok(table.invite_code);

  // A team invite seats its holder on that team.
  const ambar = await host.invite(table.id, "AMBAR");
  assert.equal(ambar.team, "AMBAR");
  const joined = await bia.join(ambar.code);
  const biaSeat = joined.players.findIndex((p) => p.user_id === me(bia));
  assert.ok([1, 3].includes(biaSeat), `seat ${biaSeat} is AMBAR's`);

  // A revoked invite is gone; the host sees the invites that remain.
  const spare = await host.invite(table.id);
  assert.ok((await host.table(table.id)).invites.some((i) => i.code === spare.code));
  await host.revokeInvite(table.id, spare.code);
  assert.ok(!(await host.table(table.id)).invites.some((i) => i.code === spare.code));
  const gone = await refused(caio.join(spare.code));
  assert.equal(gone.status, 404);
  assert.equal(gone.code, "invite_not_found");

  await caio.join(table.invite_code);
  await duda.join(table.invite_code);
  // Duda leaves before the start: the seat is free again, then Duda comes back.
  const left = await duda.leave(table.id);
  assert.ok(!left.table?.players.some((p) => p.user_id === me(duda)));
  assert.equal(left.match, undefined);
  await duda.join(table.invite_code);

  // Only the host arranges; partners sit opposite (seats 0 & 2, 1 & 3).
  const order = [me(host), me(bia), me(caio), me(duda)];
  const notHost = await refused(bia.arrangeSeats(table.id, order));
  assert.equal(notHost.status, 403);
  const arranged = await host.arrangeSeats(table.id, order);
  assert.deepEqual(
    arranged.players.map((p) => p.user_id),
    order,
  );

  const snapshot = await host.start(table.id);
  assert.equal(snapshot.status, "MATCH_STATUS_ACTIVE");
  assert.equal(snapshot.mode, "duplas");
  assert.deepEqual(
    snapshot.seats.map((s) => s.user_id),
    order,
  );
  // Starting again changes nothing (a retried request is safe).
  assert.equal((await host.start(table.id)).version, snapshot.version);
  // Each player's own view, at the same version.
  const seen = await caio.view(table.id);
  assert.equal(seen.seat, 2);
  assert.equal(seen.version, snapshot.version);
});

test("an open Dominó table: listed, sat at, started by the last seat taken", async () => {
  const [host, ...others] = await Promise.all([guest(), guest(), guest(), guest()]);
  const table = await host.createTable("domino", 4);
  assert.equal(table.open, true);
  assert.ok((await others[0].openTables("domino")).some((t) => t.id === table.id));
  const first = await others[0].sit(table.id, 2);
  assert.equal(first.table?.players[2].user_id, me(others[0]));
  assert.equal(first.match, undefined);
  const taken = await refused(others[1].sit(table.id, 2));
  assert.equal(taken.status, 409);
  await others[1].sit(table.id);
  const last = await others[2].sit(table.id);
  assert.equal(last.match?.status, "MATCH_STATUS_ACTIVE");
  assert.ok(!(await host.openTables("domino")).some((t) => t.id === table.id), "a full table is not listed");
});
