/** Moderation over the client: a moderator granted by an admin takes a report, mutes, removes, bans. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { admin, me, refused, registered } from "./harness";

test("a report taken and resolved; a mute, a removed message, a ban and its lifting; the audit log", async () => {
  const boss = await admin();
  const [mo, ana, bia] = await Promise.all([registered("mo"), registered("ana"), registered("bia")]);
  const biaId = me(bia); // the client forgets its user once a call is refused 401
  await boss.grantModerator(me(mo));
  assert.equal((await refused(ana.reports())).code, "moderators_only");

  const table = await ana.createTable("yatzy", 2);
  await bia.join(table.invite_code);
  const rude = await bia.sendTableMessage(table.id, "rude words");
  const where = { channel: "CHAT_CHANNEL_TABLE_PLAYERS" as const, table_id: table.id, message_id: rude.id };
  await ana.report({ ...where, reason: "rude" });

  const queue = await mo.reports({ limit: 100 });
  const filed = queue.reports?.find((r) => r.message_id === rude.id);
  assert.ok(filed, "the report is queued");
  assert.equal((await mo.takeReport(filed.id)).status, "REPORT_STATUS_TAKEN");
  await mo.mute(biaId, 60, "rude");
  assert.equal((await refused(bia.sendTableMessage(table.id, "again"))).code, "muted");
  await mo.removeMessage({ ...where, reason: "rude" });
  assert.deepEqual(await ana.tableMessages(table.id), []);
  assert.equal((await mo.resolveReport(filed.id, "muted, removed")).status, "REPORT_STATUS_RESOLVED");
  assert.ok((await mo.reports({ resolved: true })).reports?.some((r) => r.id === filed.id));

  await mo.ban(biaId, "again");
  assert.equal((await refused(bia.me())).status, 401);
  await mo.unban(biaId);
  const actions = (await boss.auditLog({ limit: 7 })).map((e) => e.action);
  assert.deepEqual(actions, ["unban", "ban", "resolve_report", "remove_message", "mute", "take_report", "grant_moderator"]);
  await boss.revokeModerator(me(mo));
  assert.equal((await refused(mo.reports())).code, "moderators_only");
});
