/** Friends, blocks, private messages, table invites and the social feed; table chat, reports and the chat's rate limit. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Client } from "../../src/api/client";
import type { SocialFeed } from "../../src/api/feed";
import type { MatchEvent, SocialEvent } from "../../src/api/types";
import { QUICK, guest, me, refused, registered, sockets, until } from "./harness";

function inbox(player: Client, afterId = ""): { events: SocialEvent[]; feed: SocialFeed; connected: boolean[] } {
  const events: SocialEvent[] = [];
  const connected: boolean[] = [];
  const feed = player.followSocial(
    { event: (e) => events.push(e), connected: (resumed) => connected.push(resumed) },
    afterId,
    QUICK,
  );
  return { events, feed, connected };
}

test("friends: a request, its acceptance, presence, messages and a table invite on the social feed", async () => {
  const [ana, bia] = await Promise.all([registered("ana"), registered("bia")]);
  const anas = inbox(ana);
  const bias = inbox(bia);
  await until("both online", () => anas.connected.length === 1 && bias.connected.length === 1);

  const asked = await ana.requestFriend({ username: bia.user?.name });
  assert.equal(asked.friends, false);
  const notice = await until("Bia told", () => bias.events.find((e) => "friend" in e));
  assert.ok("friend" in notice && notice.friend.user_id === me(ana));
  assert.ok((await bia.friends()).incoming.some((r) => r.user_id === me(ana)));
  const friend = await bia.acceptFriend(me(ana));
  assert.equal(friend.user_id, me(ana));
  const listing = await until("Ana sees Bia online", async () => {
    const mine = await ana.friends();
    return mine.friends.find((f) => f.user_id === me(bia) && f.online);
  });
  assert.equal(listing.name, bia.user?.name);

  const sent = await ana.sendMessage(me(bia), "oi, Bia! <b>not markup</b>");
  assert.equal(sent.text, "oi, Bia! <b>not markup</b>");
  const got = await until("Bia's message", () => bias.events.find((e) => "message" in e));
  assert.ok("message" in got && got.message.id === sent.id && got.message.sender_id === me(ana));
  await bia.sendMessage(me(ana), "olá");
  const both = await ana.messages(me(bia));
  assert.deepEqual(
    both.map((m) => m.text),
    ["oi, Bia! <b>not markup</b>", "olá"],
  );
  assert.equal((await ana.messages(me(bia), 1)).length, 1);

  // Ana invites Bia to her table; Bia's feed says where, and Bia takes the seat.
  const table = await ana.createTable("yatzy", 2);
  const invite = await ana.inviteFriend(me(bia), table.id);
  assert.equal(invite.table_id, table.id);
  const told = await until("Bia invited", () => bias.events.find((e) => "invite" in e));
  assert.ok("invite" in told && told.invite.table_id === table.id && told.invite.from_user_id === me(ana));
  await bia.join(told.invite.invite_code);
  assert.equal((await ana.table(table.id)).players[1].user_id, me(bia));

  // Bia's feed, cut, resumes after the last event it had: the message sent meanwhile, once.
  const before = bias.events.length;
  sockets(bia)[0].terminate();
  await ana.sendMessage(me(bia), "ainda aí?");
  await until("Bia back", () => bias.connected.length === 2);
  await until("the message sent while away", () => bias.events.length > before);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(bias.connected, [false, true]);
  const ids = bias.events.map((e) => e.id);
  assert.equal(new Set(ids).size, ids.length, "nothing twice");
  assert.equal(bias.events.filter((e) => "message" in e && e.message.text === "ainda aí?").length, 1);
  // A feed resumed from an id gets only what came after it.
  const later = inbox(bia, ids[ids.length - 2]);
  await until("the resumed feed", () => later.events.length === 1);
  assert.equal(later.events[0].id, ids[ids.length - 1]);

  // Declining a request, then a friendship ended.
  const caio = await registered("caio");
  await caio.requestFriend({ user_id: me(ana) });
  await ana.declineFriend(me(caio));
  assert.ok(!(await ana.friends()).incoming.some((r) => r.user_id === me(caio)));
  await ana.removeFriend(me(bia));
  assert.ok(!(await ana.friends()).friends.some((f) => f.user_id === me(bia)));
  const notFriends = await refused(ana.sendMessage(me(bia), "?"));
  assert.equal(notFriends.code, "not_friends");
  for (const feed of [anas.feed, bias.feed, later.feed]) feed.close();
});

test("a block refuses requests and messages until lifted", async () => {
  const [ana, bia] = await Promise.all([registered("ana"), registered("bia")]);
  await ana.requestFriend({ user_id: me(bia) });
  await bia.acceptFriend(me(ana));
  await bia.block(me(ana));
  const listing = await bia.friends();
  assert.ok(listing.blocked.includes(me(ana)));
  assert.ok(!listing.friends.some((f) => f.user_id === me(ana)), "a block ends the friendship");
  const blocked = await refused(ana.requestFriend({ user_id: me(bia) }));
  assert.equal(blocked.status, 403);
  await bia.unblock(me(ana));
  assert.ok(!(await bia.friends()).blocked.includes(me(ana)));
  assert.equal((await ana.requestFriend({ user_id: me(bia) })).friends, false);
});

test("table chat: the players' channel on the feed and in the history, a report, and the rate limit's Retry-After", async () => {
  const [ana, bia] = await Promise.all([guest(), guest()]);
  const table = await ana.createTable("yatzy", 2);
  await bia.join(table.invite_code);
  const chats: MatchEvent[] = [];
  const feed = bia.followTable(table.id, { event: (e) => "chat" in e && chats.push(e) }, 0, QUICK);
  const said = await ana.sendTableMessage(table.id, "boa sorte");
  assert.equal(said.text, "boa sorte");
  await until("the chat on Bia's feed", () => chats.length === 1);
  const history = await bia.tableMessages(table.id);
  assert.deepEqual(
    history.map((m) => [m.text, m.sender_id]),
    [["boa sorte", me(ana)]],
  );
  assert.equal((await bia.tableMessages(table.id, 1)).length, 1);
  await bia.report({
    channel: "CHAT_CHANNEL_TABLE_PLAYERS",
    message_id: said.id,
    table_id: table.id,
    reason: "testing the report",
  });
  // A channel the enum does not have, past the types, as a careless client would send it.
  const nowhere = { channel: "NOWHERE", message_id: said.id } as unknown as Parameters<typeof bia.report>[0];
  const badChannel = await refused(bia.report(nowhere));
  assert.equal(badChannel.status, 422);

  // Ten messages in ten seconds are allowed; the next is refused with the time to wait.
  let limited = null;
  for (let i = 0; i < 12 && !limited; i++) {
    limited = await bia.sendTableMessage(table.id, `${i}`).then(
      () => null,
      (error: unknown) => error,
    );
  }
  assert.ok(limited && typeof limited === "object" && "code" in limited);
  const refusal = limited as Awaited<ReturnType<typeof refused>>;
  assert.equal(refusal.status, 429);
  assert.equal(refusal.code, "rate_limited");
  assert.ok(refusal.retryAfter !== null && refusal.retryAfter >= 1 && refusal.retryAfter <= 10);
  feed.close();
});
