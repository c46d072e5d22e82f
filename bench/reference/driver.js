// Load generator for the boardgame.io reference server, at its best: N
// concurrent Yatzy matches, each created and joined through the lobby API and
// played over raw socket.io-client sockets on the WebSocket transport from
// the first message (no HTTP long-polling), one socket per seat kept for all
// the slot's matches (a new match is a new 'sync' on the same socket, as
// boardgame.io's own client does on updateMatchID), one move as soon as the
// previous one's state arrives. The first --warmup seconds are played but not
// counted; the window of --seconds is announced on stdout ({"window":
// "start"} / {"window": "end"}) so a harness can read every process's CPU
// at its edges. Prints one JSON line at the end.
//
//   node driver.js --server http://127.0.0.1:8000 --matches 10 --seconds 10
//                  [--warmup 2] [--players 1|2] [--throws 3]
// (or BENCH_SERVER, BENCH_MATCHES, ... in the environment, as tools/bench.py's
// BENCH_SECONDS; a bare SECONDS would be bash's clock)
//
// A move counts only once the server's state update for it has arrived on
// the mover's socket: its _stateID is past the one the move was sent against
// (the server bumps it only when it applies a move; the moves are `client:
// false`, so only the server applies them) and the state shows the move's
// effect. With two players every update is broadcast to both sockets.
'use strict';

const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const { io } = require('socket.io-client');
const { Yatzy, BOXES, BOX_NAMES } = require('./game');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  if (i > 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  return process.env[`BENCH_${name.toUpperCase()}`] ?? fallback;
}
const SERVER = option('server', 'http://127.0.0.1:8000').replace(/\/$/, '');
const MATCHES = Number(option('matches', 10));
const SECONDS = Number(option('seconds', 10));
const WARMUP = Number(option('warmup', 2));
const PLAYERS = Number(option('players', 1));
// Throws per turn before scoring. 3 = every throw the rules allow.
const THROWS = Number(option('throws', 3));
const MOVE_TIMEOUT_MS = 5000; // no answer by then: the server dropped or refused it

// Only loopback targets: this is a load test.
const host = new URL(SERVER).hostname;
if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host) && !host.startsWith('127.')) {
  throw new Error(`refusing non-loopback server ${SERVER}`);
}

const stats = { latencies: [], started: 0, finished: 0, unanswered: 0, mismatched: 0, errors: 0 };
const window = { open: false, closed: false };

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

// A seat's socket, WebSocket only, opened once for the slot.
function openSocket() {
  const socket = io(`${SERVER}/${Yatzy.name}`, { transports: ['websocket'], reconnection: false });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', reject);
  });
}

async function playMatch(sockets, deadline) {
  const { matchID } = await lobby('/create', { numPlayers: PLAYERS });
  const credentials = [];
  for (let seat = 0; seat < PLAYERS; seat++) {
    const { playerCredentials } = await lobby(`/${matchID}/join`, {
      playerID: String(seat),
      playerName: `bench${seat}`,
    });
    credentials.push(playerCredentials);
  }
  stats.started++;
  await new Promise((resolve) => {
    const states = sockets.map(() => null); // each seat's latest state of this match
    let pending = null; // {seat, move, before, sentAt, timer}
    let done = false;
    const handlers = [];
    const finish = () => {
      if (done) return;
      done = true;
      if (pending) clearTimeout(pending.timer);
      handlers.forEach(([socket, update, sync]) => {
        socket.off('update', update);
        socket.off('sync', sync);
      });
      resolve();
    };
    const onState = (seat, state) => {
      if (done || !state) return;
      if (states[seat] && state._stateID < states[seat]._stateID) return;
      states[seat] = state;
      if (pending) {
        if (seat !== pending.seat || state._stateID <= pending.before._stateID) return;
        clearTimeout(pending.timer);
        if (!applied(pending.before, state, pending.seat, pending.move)) stats.mismatched++;
        else if (window.open && !window.closed) stats.latencies.push(performance.now() - pending.sentAt);
        pending = null;
      }
      if (state.ctx.gameover) {
        stats.finished++;
        return finish();
      }
      if (performance.now() >= deadline) return finish();
      const mover = Number(state.ctx.currentPlayer);
      const current = states[mover];
      if (!current || current._stateID !== state._stateID) return; // the mover's copy is behind
      const move = nextMove(current.G, mover);
      const action = {
        type: 'MAKE_MOVE',
        payload: { type: move[0], args: [move[1]], playerID: String(mover), credentials: credentials[mover] },
      };
      pending = {
        seat: mover,
        move,
        before: current,
        timer: setTimeout(() => {
          stats.unanswered++;
          finish();
        }, MOVE_TIMEOUT_MS),
        sentAt: performance.now(),
      };
      sockets[mover].emit('update', action, current._stateID, matchID, String(mover));
    };
    sockets.forEach((socket, seat) => {
      const update = (id, state) => id === matchID && onState(seat, state);
      const sync = (id, info) => id === matchID && info && onState(seat, info.state);
      handlers.push([socket, update, sync]);
      socket.on('update', update);
      socket.on('sync', sync);
      socket.emit('sync', matchID, String(seat), credentials[seat], PLAYERS);
    });
  });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

// utime + stime of this process, from /proc as the harness reads the servers'.
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'])) || 100;
function cpuSeconds() {
  try {
    const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(')').pop().trim().split(/\s+/);
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    const used = process.cpuUsage();
    return (used.user + used.system) / 1e6;
  }
}

const say = (value) => new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, resolve));

// Calls `fn` once performance.now() has reached `time` (a timer may fire a
// fraction of a millisecond early).
function at(time, fn) {
  const left = time - performance.now();
  if (left <= 0) fn();
  else setTimeout(() => at(time, fn), Math.ceil(left));
}

async function main() {
  // Never outlive the run by much, whatever the server does.
  setTimeout(() => {
    console.error('driver: hard time limit reached');
    process.exit(2);
  }, (WARMUP + SECONDS + 30) * 1000).unref();

  const begin = performance.now();
  // Slots play on a moment past the window (its end may come a little late).
  const deadline = begin + (WARMUP + SECONDS + 0.5) * 1000;
  let cpuStart = 0;
  let start = 0;
  let elapsed = 0;
  let cpuUsed = 0;
  // The window's end is timed from its start, so it lasts SECONDS at least.
  const closed = new Promise((resolve) =>
    setTimeout(async () => {
      cpuStart = cpuSeconds();
      start = performance.now();
      window.open = true;
      await say({ window: 'start' });
      at(start + SECONDS * 1000, async () => {
        window.closed = true;
        elapsed = (performance.now() - start) / 1000;
        cpuUsed = cpuSeconds() - cpuStart;
        await say({ window: 'end' });
        resolve();
      });
    }, WARMUP * 1000),
  );
  await Promise.all(
    Array.from({ length: MATCHES }, async () => {
      let sockets;
      try {
        sockets = await Promise.all(Array.from({ length: PLAYERS }, openSocket));
      } catch (error) {
        stats.errors++;
        return;
      }
      while (performance.now() < deadline) {
        try {
          await playMatch(sockets, deadline);
        } catch (error) {
          stats.errors++;
          if (!stats.firstError) stats.firstError = String(error.message || error);
        }
      }
      for (const socket of sockets) socket.close();
    }),
  );
  await closed;

  const sorted = stats.latencies.sort((a, b) => a - b);
  const round = (x, digits = 3) => (x === null ? null : Number(x.toFixed(digits)));
  await say({
    moves: sorted.length,
    seconds: round(elapsed),
    moves_per_second: round(sorted.length / elapsed, 1),
    p50_ms: round(percentile(sorted, 50)),
    p99_ms: round(percentile(sorted, 99)),
    driver_cpu_s: round(cpuUsed),
    matches: MATCHES,
    matches_started: stats.started,
    matches_finished: stats.finished,
    unanswered: stats.unanswered,
    mismatched: stats.mismatched,
    errors: stats.errors,
    first_error: stats.firstError || null,
    players: PLAYERS,
    throws: THROWS,
    warmup: WARMUP,
    transport: 'websocket',
  });
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
