/** Trophies, and a small tournament run to its end over the client, followed live on its feed. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SocialEvent, Tournament } from "../../src/api/types";
import { QUICK, admin, guest, me, playBozo, refused, registered, until } from "./harness";

test("every trophy there is to win", async () => {
  const kinds = await (await guest()).trophyKinds();
  const ids = kinds.map((k) => k.id);
  for (const id of ["first_win", "yatzy_300", "bozo_general", "domino_batida", "tournament_podium"]) {
    assert.ok(ids.includes(id), id);
  }
  assert.ok(kinds.every((k) => k.title && k.description));
});

test("a Bozó duel tournament: announced, registered, started, played and followed to its end", async () => {
  const boss = await admin();
  const [ana, bia, caio] = await Promise.all([registered("ana"), registered("bia"), registered("caio")]);
  const notAdmin = await refused(ana.createTournament({ name: "Copa", game: "bozo", format: "TOURNAMENT_FORMAT_SWISS", max_entrants: 2 }));
  assert.equal(notAdmin.code, "admin_required");
  const created = await boss.createTournament({
    name: "Copa do Cliente",
    game: "bozo",
    options: { mode: "DUEL" },
    format: "TOURNAMENT_FORMAT_SWISS",
    max_entrants: 2,
  });
  assert.equal(created.status, "TOURNAMENT_STATUS_REGISTRATION");
  assert.equal(created.table_size, 2);

  const seen: Tournament[] = [];
  const feed = caio.followTournament(created.id, { tournament: (t) => seen.push(t) }, QUICK);
  let ended: string | null = null;
  const ends = ana.followTournament(created.id, { tournament: () => undefined, end: (reason) => (ended = reason) });
  await until("the tournament on the feed", () => seen.length > 0);
  assert.equal(seen[0].id, created.id);

  await ana.registerForTournament(created.id);
  await bia.registerForTournament(created.id);
  const full = await refused(caio.registerForTournament(created.id));
  assert.equal(full.code, "tournament_full");
  await bia.withdrawFromTournament(created.id);
  await caio.registerForTournament(created.id);
  assert.deepEqual(
    (await boss.tournament(created.id)).entrants.flatMap((e) => e.players.map((p) => p.user_id)).sort(),
    [me(ana), me(caio)].sort(),
  );
  const listed = await ana.tournaments({ game: "bozo", status: "TOURNAMENT_STATUS_REGISTRATION" });
  assert.ok(listed.some((t) => t.id === created.id));
  await until("the registrations on the feed", () => seen[seen.length - 1].entrants.length === 2);

  const started = await boss.startTournament(created.id);
  assert.equal(started.status, "TOURNAMENT_STATUS_RUNNING");
  assert.equal(started.rounds_planned, 1);
  const [board] = started.rounds[0].boards;
  assert.ok((await ana.tournaments({ status: "TOURNAMENT_STATUS_RUNNING" })).some((t) => t.id === created.id));
  // The feed sends the record as it is at each poll: a duel played faster
  // than a poll would go from registration to finished in one step.
  await until("the start on the feed", () => seen[seen.length - 1].status === "TOURNAMENT_STATUS_RUNNING");

  const final = await playBozo(
    new Map([
      [me(ana), ana],
      [me(caio), caio],
    ]),
    board.table_id,
  );
  assert.equal(final.status, "MATCH_STATUS_FINISHED");
  const over = await until("the end on the feed", () => {
    const last = seen[seen.length - 1];
    return last.status === "TOURNAMENT_STATUS_FINISHED" && last;
  }, 60_000);
  await until("the feed's end", () => ended !== null && feed.closed && ends.closed);
  assert.equal(ended, "tournament_over");
  assert.deepEqual(
    seen.map((t) => t.status).filter((s, i, all) => s !== all[i - 1]),
    ["TOURNAMENT_STATUS_REGISTRATION", "TOURNAMENT_STATUS_RUNNING", "TOURNAMENT_STATUS_FINISHED"],
  );
  assert.deepEqual(
    over.standings.map((s) => s.place),
    [1, 2],
  );
  const winner = over.entrants.find((e) => e.id === over.standings[0].entrant_id)?.players[0].user_id;
  assert.ok(winner === me(ana) || winner === me(caio));
  const podium = await until("the podium's trophy", async () =>
    (await boss.trophies(winner)).find((t) => t.kind?.id === "tournament_podium"),
  );
  assert.equal(podium.tournament_id, created.id);
});

test("an admin removes a no-show before the start, then calls the tournament off", async () => {
  const boss = await admin();
  const [ana, bia] = await Promise.all([registered("ana"), registered("bia")]);
  const created = await boss.createTournament({ name: "Copa Cancelada", game: "yatzy", format: "TOURNAMENT_FORMAT_SWISS", max_entrants: 4 });
  await ana.registerForTournament(created.id);
  await bia.registerForTournament(created.id);
  const entrant = (await boss.tournament(created.id)).entrants.find((e) => e.players[0].user_id === me(bia));
  assert.ok(entrant);
  assert.equal((await refused(ana.removeEntrant(created.id, entrant.id))).code, "admin_required");
  const edited = await boss.editTournament(created.id, { name: "Copa Adiada", max_entrants: 6, round_seconds: 600 });
  assert.deepEqual([edited.name, edited.max_entrants, edited.round_seconds], ["Copa Adiada", 6, 600]);
  const tooFew = await refused(boss.editTournament(created.id, { max_entrants: 1 }));
  assert.equal(tooFew.code, "invalid_tournament");
  assert.equal((await refused(ana.editTournament(created.id, { name: "Minha" }))).code, "admin_required");
  const left = await boss.removeEntrant(created.id, entrant.id);
  assert.deepEqual(left.entrants.map((e) => e.players[0].user_id), [me(ana)]);
  const off = await boss.cancelTournament(created.id);
  assert.equal(off.status, "TOURNAMENT_STATUS_CANCELLED");
  assert.equal((await refused(boss.cancelTournament(created.id))).code, "tournament_over");
  assert.equal((await refused(boss.editTournament(created.id, { name: "Tarde" }))).code, "tournament_over");
});

test("a Dominó team's notices on the social feed: a partner withdrew (with the team code), an admin removed the team", async () => {
  const boss = await admin();
  const [ana, bia, caio] = await Promise.all([registered("ana"), registered("bia"), registered("caio")]);
  const heard: SocialEvent[] = [];
  const feed = bia.followSocial({ event: (e) => heard.push(e) }, "", QUICK);
  const caios: SocialEvent[] = [];
  const caioFeed = caio.followSocial({ event: (e) => caios.push(e) }, "", QUICK);
  try {
    const created = await boss.createTournament({ name: "Duplas", game: "domino", format: "TOURNAMENT_FORMAT_SWISS", max_entrants: 4 });
    const code = (await ana.registerForTournament(created.id)).team_code;
    assert.ok(code);
    await bia.registerForTournament(created.id, code);
    await ana.withdrawFromTournament(created.id);
    const withdrew = await until("the partner's withdrawal on the feed", () =>
      heard.flatMap((e) => ("tournament" in e ? [e.tournament] : [])).find((n) => n?.tournament_id === created.id));
    assert.deepEqual(withdrew, {
      kind: "TOURNAMENT_NOTICE_KIND_PARTNER_WITHDREW",
      tournament_id: created.id,
      tournament_name: "Duplas",
      user_id: me(ana),
      name: ana.user?.name,
      team_code: code,
    });
    // A new partner registers with the code the notice gave; then an admin takes the team off.
    await caio.registerForTournament(created.id, withdrew.team_code);
    const [team] = (await boss.tournament(created.id)).entrants;
    assert.ok(team?.complete);
    await boss.removeEntrant(created.id, team.id);
    const removed = await until("the removal on the new partner's feed", () =>
      caios.flatMap((e) => ("tournament" in e ? [e.tournament] : [])).find((n) => n?.kind === "TOURNAMENT_NOTICE_KIND_REMOVED"));
    assert.equal(removed.tournament_id, created.id);
    assert.equal(removed.user_id, me(boss));
  } finally {
    feed.close();
    caioFeed.close();
  }
});

test("an admin sets a recurring tournament, lists it and ends it", async () => {
  const boss = await admin();
  const ana = await registered("ana");
  const first = Date.now() / 1000 + 86400;
  const schedule = await boss.createTournamentSchedule({
    name: "Diário", game: "yatzy", format: "TOURNAMENT_FORMAT_SWISS", max_entrants: 8, first_at: first, every_seconds: 86400,
  });
  assert.equal(schedule.every_seconds, 86400);
  assert.equal(schedule.tournament?.name, "Diário");
  assert.equal((await refused(ana.tournamentSchedules())).code, "admin_required");
  assert.ok((await boss.tournamentSchedules()).some((s) => s.id === schedule.id));
  await boss.deleteTournamentSchedule(schedule.id);
  assert.equal((await refused(boss.deleteTournamentSchedule(schedule.id))).code, "schedule_not_found");
});
