// Load generator for the boardgame.io reference server: N concurrent Yatzy
// matches, each created and joined through the lobby API and played with
// boardgame.io's own client over its SocketIO transport, as fast as the
// server answers. Prints one JSON line at the end.
//
//   node driver.js --server http://127.0.0.1:8000 --matches 10 --seconds 10
//                  [--players 1|2] [--throws 3] [--transport default|websocket]
// (or BENCH_SERVER, BENCH_MATCHES, ... in the environment, as tools/bench.py's
// BENCH_SECONDS; a bare SECONDS would be bash's clock)
//
// A move counts only once the server's state update for it has arrived:
// its _stateID is past the one the move was sent against (the server bumps
// it only when it applies a move; the client does not, as the moves are
// `client: false`) and the update shows the move's effect.
'use strict';

const { performance } = require('node:perf_hooks');
const { Client } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { Yatzy, BOXES, BOX_NAMES } = require('./game');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  if (i > 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  return process.env[`BENCH_${name.toUpperCase()}`] ?? fallback;
}
const SERVER = option('server', 'http://127.0.0.1:8000').replace(/\/$/, '');
const MATCHES = Number(option('matches', 10));
const SECONDS = Number(option('seconds', 10));
const PLAYERS = Number(option('players', 1));
// Throws per turn before scoring. 3 = every throw the rules allow; 2 matches
// the strategy of tools/bench.py (throw, re-throw once, score).
const THROWS = Number(option('throws', 3));
// `default`: socket.io's own choice, as SocketIO({server}) and a browser get
// it: HTTP long-polling first, upgraded to a WebSocket once probed; matches
// are short, so many moves go over polling. `websocket`: WebSocket from the
// first message, the best case for boardgame.io.
const TRANSPORT = option('transport', 'default');
if (!['default', 'websocket'].includes(TRANSPORT)) throw new Error(`unknown transport ${TRANSPORT}`);
const SOCKET_OPTS = TRANSPORT === 'websocket' ? { transports: ['websocket'] } : undefined;
const MOVE_TIMEOUT_MS = 5000; // no answer by then: the server dropped or refused it

// Only loopback targets: this is a load test.
const host = new URL(SERVER).hostname;
if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host) && !host.startsWith('127.')) {
  throw new Error(`refusing non-loopback server ${SERVER}`);
}

const stats = { latencies: [], started: 0, finished: 0, unanswered: 0, mismatched: 0 };

async function lobby(path, body) {
  const response = await fetch(`${SERVER}/games/${Yatzy.name}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

// The strategy of tools/bench.py, up to THROWS throws: throw all, keep the
// commonest face (first seen on ties) and re-throw, then score the open box
// worth most (first in card order on ties).
function nextMove(G, seat) {
  if (G.throws === 0) return ['roll', []];
  const n = {};
  for (const d of G.dice) n[d] = (n[d] || 0) + 1;
  const face = G.dice.reduce((a, d) => (n[d] > n[a] ? d : a));
  const keep = G.dice.flatMap((d, i) => (d === face ? [i] : []));
  if (G.throws < THROWS && keep.length < G.dice.length) return ['roll', keep];
  const card = G.cards[seat];
  let best = null;
  for (const box of BOX_NAMES) {
    if (box in card) continue;
    if (best === null || BOXES[box](G.dice) > BOXES[best](G.dice)) best = box;
  }
  return ['score', best];
}

// Whether `after` shows the effect of move [name, arg] made on `before`.
function applied(before, after, seat, [name, arg]) {
  if (name === 'roll') {
    return after.G.throws === before.G.throws + 1 && arg.every((i) => after.G.dice[i] === before.G.dice[i]);
  }
  return after.G.cards[seat][arg] === BOXES[arg](before.G.dice);
}

async function playMatch(deadline) {
  const { matchID } = await lobby('/create', { numPlayers: PLAYERS });
  const seats = [];
  for (let seat = 0; seat < PLAYERS; seat++) {
    const { playerCredentials } = await lobby(`/${matchID}/join`, {
      playerID: String(seat),
      playerName: `bench${seat}`,
    });
    seats.push(playerCredentials);
  }
  stats.started++;

  await new Promise((resolve) => {
    let pending = null; // the move in flight: {client, seat, move, before, sentAt, timer}
    let done = false;
    const clients = seats.map((credentials, seat) =>
      Client({
        game: Yatzy,
        // Each client opens its own connection (socket.io multiplexes only
        // distinct namespaces), so every match has its own, as in browsers.
        multiplayer: SocketIO({ server: SERVER, socketOpts: SOCKET_OPTS }),
        matchID,
        playerID: String(seat),
        credentials,
        debug: false,
      }),
    );

    const finish = () => {
      if (done) return;
      done = true;
      if (pending) clearTimeout(pending.timer);
      for (const client of clients) client.stop();
      resolve();
    };

    const onState = (client, state) => {
      if (done || !state) return;
      if (pending) {
        // Our own dispatch notifies synchronously with the unchanged state;
        // other seats' copies may arrive first. Wait for the mover's update.
        if (client !== pending.client || state._stateID <= pending.before._stateID) return;
        clearTimeout(pending.timer);
        if (applied(pending.before, state, pending.seat, pending.move)) {
          stats.latencies.push(performance.now() - pending.sentAt);
        } else {
          stats.mismatched++;
        }
        pending = null;
      }
      if (state.ctx.gameover) {
        stats.finished++;
        return finish();
      }
      if (performance.now() >= deadline) return finish();
      // Move from the current player's client once it has caught up.
      const seat = Number(state.ctx.currentPlayer);
      const mover = clients[seat];
      const current = mover.getState();
      if (!current || current._stateID !== state._stateID) return;
      const move = nextMove(current.G, seat);
      pending = {
        client: mover,
        seat,
        move,
        before: current,
        timer: setTimeout(() => {
          stats.unanswered++;
          finish();
        }, MOVE_TIMEOUT_MS),
        sentAt: performance.now(),
      };
      mover.moves[move[0]](move[1]);
    };

    for (const client of clients) {
      client.subscribe((state) => onState(client, state));
      client.start();
    }
  });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main() {
  // Never outlive the run by much, whatever the server does.
  setTimeout(() => {
    console.error('driver: hard time limit reached');
    process.exit(2);
  }, (SECONDS + 30) * 1000).unref();

  const cpu = process.cpuUsage();
  const start = performance.now();
  const deadline = start + SECONDS * 1000;
  // Each slot plays matches back to back until the deadline; moves in flight
  // then are waited for, and the clock stops when the last slot is done.
  await Promise.all(
    Array.from({ length: MATCHES }, async () => {
      while (performance.now() < deadline) await playMatch(deadline);
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);

  const sorted = stats.latencies.sort((a, b) => a - b);
  const round = (x, digits = 3) => (x === null ? null : Number(x.toFixed(digits)));
  console.log(
    JSON.stringify({
      moves: sorted.length,
      seconds: round(elapsed),
      moves_per_second: round(sorted.length / elapsed, 1),
      p50_ms: round(percentile(sorted, 50)),
      p99_ms: round(percentile(sorted, 99)),
      driver_cpu_s: round((used.user + used.system) / 1e6),
      matches: MATCHES,
      matches_started: stats.started,
      matches_finished: stats.finished,
      unanswered: stats.unanswered,
      mismatched: stats.mismatched,
      players: PLAYERS,
      throws: THROWS,
      transport: TRANSPORT,
    }),
  );
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
