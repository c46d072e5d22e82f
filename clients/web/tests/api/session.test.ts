/** The service's probes, and sessions: guests, accounts, log-in, refresh (once, on a 401), refusals. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryStore } from "../../src/api/client";
import { PASSWORD, client, me, refused, unique } from "./harness";

test("the probes answer ok", async () => {
  const anyone = client();
  assert.deepEqual(await anyone.health(), { status: "ok" });
  assert.deepEqual(await anyone.live(), { status: "ok" });
});

test("a guest plays under the name it chose", async () => {
  const player = client();
  const name = unique("Bia");
  const session = await player.guest(name);
  assert.equal(session.token_type.toLowerCase(), "bearer");
  assert.ok(session.expires_in > 60 && session.access_token && session.refresh_token);
  const user = await player.me();
  assert.equal(user.id, me(player));
  assert.equal(user.name, name);
  assert.equal(user.role, "guest");
});

test("sign up, log in again elsewhere, wrong password and taken name refused", async () => {
  const username = unique("ana");
  const first = client();
  const signed = await first.signUp(username, PASSWORD);
  assert.equal(signed.user?.name, username);
  const second = client();
  const logged = await second.logIn(username, PASSWORD);
  assert.equal(logged.user?.id, signed.user?.id);
  // A session of its own (access tokens are stateless: within one second they may coincide).
  assert.notEqual(logged.refresh_token, signed.refresh_token);
  assert.equal((await second.me()).name, username);

  const wrong = await refused(client().logIn(username, "not the password"));
  assert.equal(wrong.status, 401);
  assert.equal(wrong.code, "bad_credentials");
  assert.equal(wrong.retryAfter, null);
  const taken = await refused(client().signUp(username, PASSWORD));
  assert.equal(taken.status, 409);
  assert.equal(taken.code, "username_taken");
  const short = await refused(client().signUp("ab", PASSWORD));
  assert.equal(short.status, 422);
});

test("a refused access token is refreshed once and the call goes through", async () => {
  const username = unique("caio");
  const original = client();
  const session = await original.signUp(username, PASSWORD);
  // A stored session whose access token is no longer any good (expired, say).
  const store = new MemoryStore();
  store.save({ ...session, access_token: "not-a-token" });
  const player = client(store);
  assert.equal((await player.me()).name, username);
  const now = store.load();
  assert.ok(now && now.access_token !== "not-a-token" && now.refresh_token !== session.refresh_token);
  assert.equal(player.accessToken, now.access_token);
});

test("a refresh token works once; using it again logs out", async () => {
  const player = client();
  const session = await player.guest(unique("duda"));
  const fresh = await player.refresh();
  assert.notEqual(fresh.refresh_token, session.refresh_token);
  assert.equal((await player.me()).id, session.user?.id);

  const store = new MemoryStore();
  store.save(session); // the old pair, already spent
  const stale = client(store);
  await stale.refresh().then(
    () => assert.fail("a spent refresh token was accepted"),
    (error: unknown) => assert.equal((error as { code?: string }).code, "refresh_token_used"),
  );
  assert.equal(stale.user, null);
  assert.equal(store.load(), null);
  const out = await refused(stale.me());
  assert.equal(out.status, 401);
  assert.equal(out.code, "unauthenticated");
});
