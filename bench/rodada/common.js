// What Rodada's load generators share with each other and with the
// boardgame.io reference driver (../reference/driver.js): options, the
// player's strategy (the same move mix), the check that an answer shows the
// move, CPU accounting and the one JSON line each driver prints.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { performance } = require('node:perf_hooks');

// --name value, else BENCH_NAME from the environment, else the default (as
// the reference driver reads its options).
function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  if (i > 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  return process.env[`BENCH_${name.toUpperCase().replace(/-/g, '_')}`] ?? fallback;
}

// Only loopback targets: this is a load test.
function loopbackOnly(address) {
  const host = address.includes('://') ? new URL(address).hostname : address.replace(/:\d+$/, '');
  if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host) && !host.startsWith('127.')) {
    throw new Error(`refusing non-loopback target ${address}`);
  }
}

const PROTOS = path.join(__dirname, '..', '..', 'protos');
const MOVE_TIMEOUT_MS = 5000; // as the reference: no answer by then counts as unanswered

// The reference driver's strategy over Rodada's Yatzy view: throw all, keep
// the commonest face (first seen on ties) and re-throw while fewer than
// `throws` throws are used, then score the open box worth most (the
// service's preview lists the open boxes in card order; first on ties).
function nextMove(view, throws) {
  const used = view.throws_used;
  if (used === 0) return { roll: { keep: [] } };
  const n = {};
  for (const d of view.dice) n[d] = (n[d] || 0) + 1;
  const face = view.dice.reduce((a, d) => (n[d] > n[a] ? d : a));
  const keep = view.dice.flatMap((d, i) => (d === face ? [i] : []));
  if (used < throws && keep.length < view.dice.length) return { roll: { keep } };
  let best = null;
  for (const p of view.preview) if (best === null || p.points > best.points) best = p;
  return { score: { box: best.box } };
}

// Whether the view after the move shows it: one throw more with the kept dice
// unchanged, or the box filled on the mover's card with the previewed points.
function applied(before, after, seat, move) {
  if (move.roll) {
    return (
      after.throws_used === before.throws_used + 1 &&
      move.roll.keep.every((i) => after.dice[i] === before.dice[i])
    );
  }
  const points = before.preview.find((p) => p.box === move.score.box).points;
  const card = after.cards.find((c) => c.seat === seat);
  const entry = card && card.boxes.find((b) => b.box === move.score.box);
  return Boolean(entry && entry.filled && entry.points === points);
}

const TICKS = Number(execFileSync('getconf', ['CLK_TCK'])) || 100;
// utime + stime of this process, from /proc/self/stat as the harness reads
// the servers' (the reference driver's process.cpuUsage() counts the same).
function cpuSeconds() {
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(')').pop().trim().split(/\s+/);
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const round = (x, digits = 3) => (x === null || x === undefined ? null : Number(x.toFixed(digits)));

function newStats() {
  return {
    latencies: [],
    started: 0,
    finished: 0,
    unanswered: 0,
    mismatched: 0,
    errors: 0,
    firstError: null,
  };
}

function noteError(stats, error) {
  stats.errors++;
  if (stats.firstError === null) stats.firstError = String(error && error.message ? error.message : error);
}

// Runs `slot(index, deadline, stats, counting)` in each of `matches` slots
// until the deadline: the first `warmup` seconds are played but not counted
// (connections open, caches fill, the JIT warms), then a window of `seconds`
// in which a move answered counts (`counting()` says whether it does now).
// The window's edges are printed ({"window": "start"}, {"window": "end"}) so
// the harness reads the servers' CPU at the same instants as the driver's
// own. Moves in flight at the end are waited for (not counted), then the
// driver prints its JSON line with `extra` fields and exits.
// Calls `fn` once performance.now() has reached `time` (a timer may fire a
// fraction of a millisecond early).
function at(time, fn) {
  const left = time - performance.now();
  if (left <= 0) fn();
  else setTimeout(() => at(time, fn), Math.ceil(left));
}

async function run({ matches, seconds, warmup = 2, players, throws, path: pathName, slot, extra }) {
  setTimeout(() => {
    console.error('driver: hard time limit reached');
    process.exit(2);
  }, (warmup + seconds + 60) * 1000).unref();
  const stats = newStats();
  const begin = performance.now();
  // Slots play on a moment past the window (its end may come a little late).
  const deadline = begin + (warmup + seconds + 0.5) * 1000;
  const window = { open: false, closed: false, start: 0, elapsed: 0, cpu: 0 };
  const counting = () => window.open && !window.closed;
  // The window's end is timed from its start, so it lasts `seconds` at least.
  const closed = new Promise((resolve) =>
    setTimeout(async () => {
      window.cpu = cpuSeconds();
      window.start = performance.now();
      window.open = true;
      await print({ window: 'start' });
      at(window.start + seconds * 1000, async () => {
        window.closed = true;
        window.elapsed = (performance.now() - window.start) / 1000;
        window.cpu = cpuSeconds() - window.cpu;
        await print({ window: 'end' });
        resolve();
      });
    }, warmup * 1000),
  );
  await Promise.all(Array.from({ length: matches }, (_, i) => slot(i, deadline, stats, counting)));
  await closed;
  const elapsed = window.elapsed;
  const sorted = stats.latencies.sort((a, b) => a - b);
  await print({
    path: pathName,
    moves: sorted.length,
    seconds: round(elapsed),
    moves_per_second: round(sorted.length / elapsed, 1),
    p50_ms: round(percentile(sorted, 50)),
    p99_ms: round(percentile(sorted, 99)),
    driver_cpu_s: round(window.cpu),
    matches,
    matches_started: stats.started,
    matches_finished: stats.finished,
    unanswered: stats.unanswered,
    mismatched: stats.mismatched,
    errors: stats.errors,
    first_error: stats.firstError,
    players,
    throws,
    warmup,
    ...(extra ? extra(stats, counting) : {}),
  });
  process.exit(0);
}

// One JSON line on stdout, flushed: a pipe is written asynchronously, and
// process.exit() right after console.log() cuts a long line short.
function print(value) {
  return new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, resolve));
}

module.exports = {
  MOVE_TIMEOUT_MS,
  PROTOS,
  applied,
  cpuSeconds,
  loopbackOnly,
  nextMove,
  noteError,
  option,
  percentile,
  print,
  round,
  run,
};
