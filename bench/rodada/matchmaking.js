// Matchmaking burst against one gateway (issue 15, point 5): N guests (from
// --tokens, a JSON file [{"user_id", "token"}, ...], else made first over
// HTTP, untimed), then N casual tickets queued as fast as the gateway takes
// them, each followed over its WebSocket (the open socket is the ticket),
// until every ticket is matched or closed. Prints one JSON line: the timings,
// and every ticket's final update, so the caller can check each ticket was
// seated exactly once.
//
//   node matchmaking.js --gateway http://127.0.0.1:8000 --tickets 5000
//        [--game bozo] [--options '{"mode":"DUEL"}'] [--concurrency 100] [--timeout 300]
// (--timeout: seconds from the first ticket; tickets not final by then are
// reported as such). Progress goes to stderr every 10 s.
'use strict';

const fs = require('node:fs');
const { performance } = require('node:perf_hooks');
const { Agent } = require('undici');
const WebSocket = require('ws');
const common = require('./common');

const GATEWAY = common.option('gateway', 'http://127.0.0.1:8000').replace(/\/$/, '');
const TICKETS = Number(common.option('tickets', 5000));
const GAME = common.option('game', 'bozo');
const OPTIONS = JSON.parse(common.option('options', '{"mode":"DUEL"}'));
const CONCURRENCY = Number(common.option('concurrency', 100));
const TIMEOUT_S = Number(common.option('timeout', 300));
const TOKENS = common.option('tokens', '');
common.loopbackOnly(GATEWAY);
const WS_BASE = GATEWAY.replace(/^http/, 'ws');
const agent = new Agent({ connections: CONCURRENCY, pipelining: 1 });

async function post(path, body, token) {
  const { statusCode, body: reply } = await agent.request({
    origin: GATEWAY,
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await reply.text();
  if (statusCode !== 200 && statusCode !== 201) throw new Error(`POST ${path}: ${statusCode} ${text}`);
  return JSON.parse(text);
}

// `worker(i)` for i in 0..n-1, `limit` at a time.
async function pool(n, limit, worker) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, n) }, async () => {
      while (next < n) await worker(next++);
    }),
  );
}

// Follows ticket `id` until its final update ("matched" or "closed"), which
// the promise resolves with (with the time it arrived), or an error. A
// socket lost before the final update is followed again, as a client would
// (a ticket taken meanwhile answers with its table at once; one dropped
// because its follower left says so): `reconnects` counts them.
let reconnects = 0;
async function follow(id, token) {
  for (let attempt = 0; ; attempt++) {
    const outcome = await followOnce(id, token);
    if (!outcome.lost || attempt >= 3) return outcome;
    reconnects++;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function followOnce(id, token) {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${WS_BASE}/v1/matchmaking/tickets/${id}/events`);
    let final = null;
    ws.on('open', () => ws.send(JSON.stringify({ token })));
    ws.on('message', (data) => {
      const message = JSON.parse(data);
      if (message.matched || message.closed || message.error) {
        final = { ...message, at: performance.now() };
        ws.close();
      }
    });
    ws.on('close', (code, reason) =>
      resolve(
        final ?? { error: `closed ${code} ${reason} without a final update`, lost: true, at: performance.now() },
      ),
    );
    ws.on('error', (error) => resolve({ error: String(error.message), lost: true, at: performance.now() }));
  });
}

async function main() {
  let players = new Array(TICKETS);
  if (TOKENS) {
    players = JSON.parse(fs.readFileSync(TOKENS, 'utf8')).slice(0, TICKETS);
    if (players.length < TICKETS) throw new Error(`${TOKENS} has ${players.length} guests, ${TICKETS} needed`);
  } else {
    await pool(TICKETS, CONCURRENCY, async (i) => {
      const session = await post('/v1/auth/guest', { name: `mm${i}` });
      players[i] = { token: session.access_token, user_id: session.user.id };
    });
  }

  // Never outlive the burst by much, whatever the gateway does.
  setTimeout(() => {
    console.error('matchmaking: hard time limit reached');
    process.exit(2);
  }, (TIMEOUT_S + 60) * 1000).unref();
  const cpu = common.cpuSeconds();
  const start = performance.now();
  const followers = new Array(TICKETS);
  const tickets = new Array(TICKETS);
  let final = 0;
  const progress = setInterval(() => {
    const queued = tickets.filter(Boolean).length;
    console.error(`matchmaking: ${((performance.now() - start) / 1000).toFixed(0)} s: ${queued} queued, ${final} final`);
  }, 10_000);
  const timeout = new Promise((resolve) => setTimeout(() => resolve(null), TIMEOUT_S * 1000).unref());
  await pool(TICKETS, CONCURRENCY, async (i) => {
    const made = await post('/v1/matchmaking/tickets', { game: GAME, options: OPTIONS }, players[i].token);
    tickets[i] = made.id;
    followers[i] = follow(made.id, players[i].token).then((f) => {
      final++;
      return f;
    });
  });
  const queued = performance.now();
  const finalWhenQueued = final;
  const finals = await Promise.all(followers.map((f) => Promise.race([f, timeout])));
  const last = Math.max(queued, ...finals.filter(Boolean).map((f) => f.at));
  const used = common.cpuSeconds() - cpu;
  clearInterval(progress);

  await common.print({
    tickets: TICKETS,
    game: GAME,
    options: OPTIONS,
    queue_seconds: common.round((queued - start) / 1000),
    // Tickets already final when the last was queued: the matcher keeps up
    // with the queueing if most are.
    final_when_queued: finalWhenQueued,
    seconds: common.round((last - start) / 1000),
    driver_cpu_s: common.round(used),
    // Ticket sockets lost before their final update and followed again.
    reconnects,
    // Per ticket: who, which ticket, and its final update (null: none in time).
    results: finals.map((f, i) => ({
      user_id: players[i].user_id,
      ticket_id: tickets[i],
      matched: f && f.matched ? { table_id: f.matched.table_id, seat: f.matched.seat } : null,
      other: f && !f.matched ? f : f ? undefined : 'timeout',
    })),
  });
  await agent.close();
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
