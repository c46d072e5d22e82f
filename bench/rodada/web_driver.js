// Load generator for Rodada's web path, lean: the gateway's HTTP API over
// bare HTTP/1.1 keep-alive (by hand on node:net, one connection per seat) with a
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
const net = require('node:net');
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

// A seat's own keep-alive HTTP/1.1 connection, written and read by hand
// (node:http's ClientRequest, Agent and IncomingMessage cost the driver
// more than the rest of a move): one request at a time, each written in one
// piece with the headers node:http sends (Host, Connection: keep-alive),
// each reply read to its Content-Length (or its chunks). A connection the
// gateway closed between requests is opened again for the next one.
const CRLF2 = Buffer.from('\r\n\r\n');
class Connection {
  constructor(gateway) {
    this.host = gateway.host;
    this.port = Number(gateway.port);
    this.hostHeader = `${gateway.host}:${gateway.port}`;
    this.socket = null;
    this.pending = null; // {resolve, reject, timer, what}
    this.buffer = null;
    this.onTimeout = this.onTimeout.bind(this);
  }

  // A new socket; its events count only while it is the connection's.
  open() {
    const socket = net.connect({ host: this.host, port: this.port, noDelay: true });
    socket.on('data', (chunk) => this.socket === socket && this.onData(chunk));
    socket.on('error', (error) => this.socket === socket && this.settle(error));
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.buffer = null;
      this.settle(new Error('socket hang up'));
    });
    this.socket = socket;
    this.buffer = null;
  }

  // Resolves with {status, text} (the reply's body as text).
  request(method, path, token, payload) {
    if (this.socket === null) this.open();
    let head = `${method} ${path} HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n`;
    if (token) head += `authorization: Bearer ${token}\r\n`;
    head += `Host: ${this.hostHeader}\r\nConnection: keep-alive\r\n\r\n`;
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, timer: setTimeout(this.onTimeout, common.MOVE_TIMEOUT_MS), what: `${method} ${path}` };
      this.socket.write(head + payload);
    });
  }

  settle(error, reply) {
    const pending = this.pending;
    if (pending === null) return;
    this.pending = null;
    clearTimeout(pending.timer);
    if (error) pending.reject(error);
    else pending.resolve(reply);
  }

  onTimeout() {
    const what = this.pending && this.pending.what;
    this.destroy();
    this.settle(new Timeout(`${what}: no answer in ${common.MOVE_TIMEOUT_MS} ms`));
  }

  onData(chunk) {
    const buffer = this.buffer === null ? chunk : Buffer.concat([this.buffer, chunk]);
    this.buffer = buffer;
    const end = buffer.indexOf(CRLF2);
    if (end < 0) return;
    const head = buffer.latin1Slice(0, end).toLowerCase();
    const status = Number(head.slice(9, 12));
    const start = end + 4;
    let text;
    let used;
    const length = /\r\ncontent-length: *(\d+)/.exec(head);
    if (length) {
      used = start + Number(length[1]);
      if (buffer.length < used) return;
      text = buffer.utf8Slice(start, used);
    } else if (/\r\ntransfer-encoding: *chunked/.test(head)) {
      const chunks = [];
      let at = start;
      for (;;) {
        const line = buffer.indexOf('\r\n', at);
        if (line < 0) return;
        const size = parseInt(buffer.latin1Slice(at, line), 16);
        if (buffer.length < line + 2 + size + 2) return;
        if (size === 0) {
          used = line + 4; // no trailers from the gateway
          break;
        }
        chunks.push(buffer.subarray(line + 2, line + 2 + size));
        at = line + 2 + size + 2;
      }
      text = Buffer.concat(chunks).toString();
    } else if (status === 204 || status === 304) {
      used = start;
      text = '';
    } else {
      this.destroy();
      this.settle(new Error(`${this.pending && this.pending.what}: a reply without a length`));
      return;
    }
    this.buffer = used < buffer.length ? buffer.subarray(used) : null;
    if (/\r\nconnection: *close/.test(head)) this.destroy();
    this.settle(null, { status, text });
  }

  destroy() {
    if (this.socket !== null) {
      this.socket.destroy();
      this.socket = null;
      this.buffer = null;
    }
  }
}

// One request on the seat's own keep-alive connection; the reply's JSON.
async function call(seat, method, path, body) {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const { status, text } = await seat.connection.request(method, path, seat.token, payload);
  if (status !== 200 && status !== 201) throw new HttpError(`${method} ${path}: ${status} ${text}`);
  return JSON.parse(text);
}

const SNAPSHOT = Buffer.from('{"snapshot":');
const END = Buffer.from('{"end":');
function startsWith(data, prefix) {
  return data.length >= prefix.length && data.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
}
// A snapshot message's version: read from its head, where the gateway
// writes the snapshot's first fields in the proto's order (match_id, game,
// version); any other head is parsed in full.
const HEAD = /^\{"snapshot":\{"match_id":"[^"\\]*","game":"[^"\\]*","version":(\d+)[,}]/;
function snapshotVersion(data) {
  const head = HEAD.exec(data.latin1Slice(0, Math.min(data.length, 200)));
  if (head) return Number(head[1]);
  return JSON.parse(data).snapshot.version;
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
      // Only the messages the driver reads are decoded: a snapshot while
      // the seat waits for one, and the end (a message is one key,
      // {"event": …}, {"snapshot": …}, {"end": …}, …, written first).
      if (startsWith(data, SNAPSHOT)) {
        if (waiting.size === 0) return;
        const version = snapshotVersion(data);
        if (waiting.has(version)) {
          if (counting()) feedStats.latencies.push(performance.now() - waiting.get(version));
          waiting.delete(version);
        }
      } else if (startsWith(data, END) && JSON.parse(data).end) {
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
      const gateway = gatewayFor(index * PLAYERS + seat);
      const connection = new Connection(gateway);
      const session = await call({ connection }, 'POST', '/v1/auth/guest', { name: `bench${index}-${seat}` });
      seats.push({ connection, gateway, token: session.access_token });
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
  for (const seat of seats) seat.connection.destroy();
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
