// Load generator for Rodada's web path, lean: the gateway's HTTP API over
// bare HTTP/1.1 keep-alive (node:http, one Agent socket per seat) with a
// WebSocket feed per seat (ws), N concurrent Yatzy matches, solo or duel, the
// reference driver's strategy and move mix. Prints one JSON line (and the
// window's edges, see common.js).
//
//   node web_driver.js --gateway http://127.0.0.1:8000[,http://127.0.0.1:8001…]
//        [--matches 10] [--seconds 10] [--warmup 2] [--players 1|2] [--throws 3]
//
// Each seat is a guest (POST /v1/auth/guest) with its own keep-alive HTTP
// connection, kept for the slot's matches as a browser tab keeps it. Each
// match: the host opens a table, the others join with its invite, every seat
// opens the table's feed and says hello, the host starts, and whoever is to
// act posts one action as soon as the previous answer arrives. A move counts
// when its HTTP answer shows it (as the reference counts the mover's state
// update); feed_p50/p99 is from the move's request to the mover's feed
// delivering the snapshot of that version. A finished match waits for every
// feed's end message, so feeds cannot fall behind unnoticed.
'use strict';

const { performance } = require('node:perf_hooks');
const http = require('node:http');
const WebSocket = require('ws');
const common = require('./common');

// Several gateways (comma-separated): the seats are dealt over them in turn.
const GATEWAYS = common
  .option('gateway', 'http://127.0.0.1:8000')
  .split(',')
  .map((url) => url.replace(/\/$/, ''));
const MATCHES = Number(common.option('matches', 10));
const SECONDS = Number(common.option('seconds', 10));
const PLAYERS = Number(common.option('players', 1));
const THROWS = Number(common.option('throws', 3));
const WARMUP = Number(common.option('warmup', 2));
const FEED_END_TIMEOUT_MS = 10_000;
if (![1, 2].includes(PLAYERS)) throw new Error('--players is 1 or 2');
GATEWAYS.forEach(common.loopbackOnly);

// The gateway of the n-th seat: its host and port, and its WebSocket base.
function gatewayFor(n) {
  const url = GATEWAYS[n % GATEWAYS.length];
  const { hostname: host, port } = new URL(url);
  return { host, port, ws: url.replace(/^http/, 'ws') };
}

const feedStats = { latencies: [], messages: 0, ended: 0, missing: 0 };

class HttpError extends Error {}
class Timeout extends Error {}

// One request on the seat's own keep-alive connection; the reply's JSON.
function call(seat, method, path, body) {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
  if (seat.token) headers.authorization = `Bearer ${seat.token}`;
  return new Promise((resolve, reject) => {
    const { host, port } = seat.gateway;
    const request = http.request({ host, port, method, path, headers, agent: seat.agent }, (reply) => {
      const chunks = [];
      reply.on('data', (chunk) => chunks.push(chunk));
      reply.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString();
        if (reply.statusCode !== 200 && reply.statusCode !== 201) {
          reject(new HttpError(`${method} ${path}: ${reply.statusCode} ${text}`));
        } else {
          resolve(JSON.parse(text));
        }
      });
    });
    const timer = setTimeout(() => {
      request.destroy();
      reject(new Timeout(`${method} ${path}: no answer in ${common.MOVE_TIMEOUT_MS} ms`));
    }, common.MOVE_TIMEOUT_MS);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(payload);
  });
}

// One seat's feed of the table: counts what arrives, notes when the mover's
// own snapshot of a version arrives (`waiting`: version → sent time), and
// resolves `ended` on the feed's end message.
function openFeed(seat, tableId, waiting, counting) {
  const ws = new WebSocket(`${seat.gateway.ws}/v1/tables/${tableId}/events`);
  const feed = { ws, closed: false };
  feed.ended = new Promise((resolve) => {
    ws.on('open', () => ws.send(JSON.stringify({ token: seat.token, after_event_id: 0 })));
    ws.on('message', (data) => {
      feedStats.messages++;
      const message = JSON.parse(data);
      if (message.snapshot && waiting.has(message.snapshot.version)) {
        if (counting()) feedStats.latencies.push(performance.now() - waiting.get(message.snapshot.version));
        waiting.delete(message.snapshot.version);
      } else if (message.end) {
        resolve(true);
      }
    });
    ws.on('close', () => resolve(false));
    ws.on('error', () => resolve(false));
  });
  return feed;
}

async function slot(index, deadline, stats, counting) {
  const seats = [];
  try {
    for (let seat = 0; seat < PLAYERS; seat++) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const gateway = gatewayFor(index * PLAYERS + seat);
      const session = await call({ agent, gateway }, 'POST', '/v1/auth/guest', { name: `bench${index}-${seat}` });
      seats.push({ agent, gateway, token: session.access_token });
    }
  } catch (error) {
    common.noteError(stats, error);
    return;
  }
  while (performance.now() < deadline) {
    let table;
    let snapshot;
    const feeds = [];
    // Per seat: version → when the move that made it was sent (the mover's feed only).
    const waiting = seats.map(() => new Map());
    try {
      table = await call(seats[0], 'POST', '/v1/tables', { game: 'yatzy', seats: PLAYERS });
      for (const seat of seats.slice(1)) {
        await call(seat, 'POST', '/v1/tables/join', { invite_code: table.invite_code });
      }
      seats.forEach((seat, i) => feeds.push(openFeed(seat, table.id, waiting[i], counting)));
      snapshot = await call(seats[0], 'POST', `/v1/tables/${table.id}/start`);
    } catch (error) {
      common.noteError(stats, error);
      for (const feed of feeds) feed.ws.terminate();
      continue;
    }
    stats.started++;
    while (snapshot && snapshot.status === 'MATCH_STATUS_ACTIVE' && performance.now() < deadline) {
      const mover = snapshot.to_act[0];
      const before = snapshot.view;
      const move = common.nextMove(before, THROWS);
      const sentAt = performance.now();
      waiting[mover].set(snapshot.version + 1, sentAt);
      let answer;
      try {
        answer = await call(seats[mover], 'POST', `/v1/tables/${table.id}/actions`, {
          expected_version: snapshot.version,
          action: move,
        });
      } catch (error) {
        if (error instanceof Timeout) stats.unanswered++;
        else common.noteError(stats, error);
        snapshot = null;
        break;
      }
      const latency = performance.now() - sentAt;
      // A version a move skipped past (never the case in Yatzy) is not waited for.
      if (answer.version !== snapshot.version + 1) waiting[mover].delete(snapshot.version + 1);
      if (answer.version > snapshot.version && common.applied(before, answer.view, mover, move)) {
        if (counting()) stats.latencies.push(latency);
      } else {
        stats.mismatched++;
      }
      snapshot = answer;
    }
    if (snapshot && snapshot.status === 'MATCH_STATUS_FINISHED') {
      stats.finished++;
      const timeout = new Promise((resolve) => setTimeout(() => resolve(false), FEED_END_TIMEOUT_MS).unref());
      const ends = await Promise.all(feeds.map((feed) => Promise.race([feed.ended, timeout])));
      for (const ended of ends) {
        if (ended) feedStats.ended++;
        else feedStats.missing++;
      }
    }
    for (const feed of feeds) feed.ws.terminate();
  }
  for (const seat of seats) seat.agent.destroy();
}

common
  .run({
    matches: MATCHES,
    seconds: SECONDS,
    warmup: WARMUP,
    players: PLAYERS,
    throws: THROWS,
    path: 'web',
    slot,
    extra: () => {
      const sorted = feedStats.latencies.sort((a, b) => a - b);
      return {
        feed_p50_ms: common.round(common.percentile(sorted, 50)),
        feed_p99_ms: common.round(common.percentile(sorted, 99)),
        feed_messages: feedStats.messages,
        // Feeds of finished matches that delivered their end message, and those that did not in 10 s.
        feeds_ended: feedStats.ended,
        feeds_missing_end: feedStats.missing,
      };
    },
  })
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
