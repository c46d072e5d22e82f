/**
 * What the TypeScript client's tests share: clients on the stack that
 * tests/web/test_ts_client.py started (RODADA_GATEWAY; an admin account,
 * RODADA_ADMIN and RODADA_ADMIN_PASSWORD), each recording the requests and sockets it makes
 * (RODADA_CALLS, one JSON line each) so that the Python side can tell every
 * operation and feed of the API was used through the client; players; and
 * waiting for what a feed delivers.
 */
import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import WebSocket from "ws";
import { ApiRefused, Client, MemoryStore, type SessionStore } from "../../src/api/client";
import type { FeedOptions } from "../../src/api/feed";
import type { Action, Snapshot } from "../../src/api/types";

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests through tests/web/test_ts_client.py`);
  return value;
}

export const GATEWAY = setting("RODADA_GATEWAY");
const CALLS = setting("RODADA_CALLS");
const FINISHED = "MATCH_STATUS_FINISHED";

function record(line: Record<string, unknown>): void {
  appendFileSync(CALLS, JSON.stringify(line) + "\n");
}

/** The global fetch, each request and its status written down. */
const recordingFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  record({ http: init?.method ?? "GET", url: String(input), status: response.status });
  return response;
};

const opened = new WeakMap<Client, WebSocket[]>();

/** The sockets a client opened, oldest first (a test cuts or stalls one). */
export function sockets(player: Client): WebSocket[] {
  return opened.get(player) ?? [];
}

export function client(store: SessionStore = new MemoryStore()): Client {
  const mine: WebSocket[] = [];
  /** `ws`, each socket's first message written down (which proves the feed answered). */
  class RecordingWebSocket extends WebSocket {
    constructor(url: string) {
      super(url);
      mine.push(this);
      this.once("message", (data) => {
        record({ ws: url, first: Object.keys(JSON.parse(String(data)) as object)[0] });
      });
    }
  }
  const player = new Client(GATEWAY, store, {
    fetch: recordingFetch,
    WebSocket: RecordingWebSocket as unknown as typeof globalThis.WebSocket,
  });
  opened.set(player, mine);
  return player;
}

/** Quick feeds for tests: a dead connection noticed within a second. */
export const QUICK: FeedOptions = { pingEveryMs: 300, deadAfterMs: 600 };

/** A username no other test run has (3-24 characters). */
export function unique(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString("hex")}`.slice(0, 24);
}

export const PASSWORD = "correct horse battery";

export async function guest(name = unique("guest")): Promise<Client> {
  const player = client();
  await player.guest(name);
  return player;
}

export async function registered(prefix = "player"): Promise<Client> {
  const player = client();
  await player.signUp(unique(prefix), PASSWORD);
  return player;
}

export async function admin(): Promise<Client> {
  const boss = client();
  const session = await boss.logIn(setting("RODADA_ADMIN"), setting("RODADA_ADMIN_PASSWORD"));
  assert.equal(session.user?.role, "admin");
  return boss;
}

export function me(player: Client): string {
  const id = player.user?.id;
  assert.ok(id, "logged in");
  return id;
}

/** The refusal `promise` ends in. */
export async function refused(promise: Promise<unknown>): Promise<ApiRefused> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiRefused) return error;
    throw error;
  }
  assert.fail("expected a refusal");
}

/** `check()` until it gives something (not undefined or false), or fail after `timeoutMs`. */
export async function until<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Play a started Bozó duel to its end: each seat to act throws once and scores its best box. */
export async function playBozo(players: Map<string, Client>, tableId: string): Promise<Snapshot> {
  const anyone = [...players.values()][0];
  for (;;) {
    const snapshot = await anyone.view(tableId);
    if (snapshot.status === FINISHED) return snapshot;
    const seat = snapshot.to_act[0];
    const player = players.get(snapshot.seats[seat].user_id);
    assert.ok(player, `seat ${seat} is one of ours`);
    const mine = await player.view(tableId);
    const view = mine.view;
    if (mine.status === FINISHED) continue;
    assert.equal(view?.["@type"], "type.googleapis.com/rodada.bozo.v1.View");
    const preview = view["@type"] === "type.googleapis.com/rodada.bozo.v1.View" ? view.preview : [];
    const best = preview.reduce((a, b) => (b.points > a.points ? b : a), preview[0]);
    const action: Action = best ? { score: { box: best.box } } : { throw: { cup: false, keep: [] } };
    try {
      await player.act(tableId, mine.version, action);
    } catch (error) {
      // Another reader moved on first: read again.
      if (!(error instanceof ApiRefused && ["stale_version", "not_your_turn"].includes(error.code))) throw error;
    }
  }
}
