// One entry point for the boardgame.io reference benchmark: starts server.js
// on a free loopback port, runs driver.js against it, and prints one JSON
// object with throughput, latency and the CPU each process spent per move.
//
//   node bench/reference/bench.js --matches 10 --seconds 10
//        [--warmup 2] [--players 1|2] [--throws 3]
//
// Server CPU is utime+stime from /proc/<pid>/stat, read when the driver
// announces its window's start and end (after the warm-up), so it covers the
// moves counted (and the lobby calls of matches begun in the window), as
// tools/bench.py does for our services.
'use strict';

const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');

// --name value, else BENCH_NAME from the environment, else the default.
function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  if (i > 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  return process.env[`BENCH_${name.toUpperCase()}`] ?? fallback;
}
const MATCHES = option('matches', '10');
const SECONDS = option('seconds', '10');
const PLAYERS = option('players', '1');
const THROWS = option('throws', '3');
const WARMUP = option('warmup', '2');

const TICKS = Number(execFileSync('getconf', ['CLK_TCK'])) || 100; // /proc/<pid>/stat's unit
function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop().trim().split(/\s+/);
  return (Number(fields[11]) + Number(fields[12])) / TICKS; // utime + stime
}

// Busy CPU seconds of the whole machine (/proc/stat, same unit), to tell how
// much of the run's CPU went to processes other than ours: the cores are shared.
function machineBusySeconds() {
  const [, user, nice, system, , , irq, softirq, steal] = fs
    .readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return (user + nice + system + irq + softirq + steal) / TICKS;
}

const children = new Set();
function start(script, args, env) {
  // The node binary itself, no shell between, so the pid is the one to measure.
  const child = spawn(process.execPath, [path.join(__dirname, script), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  child.on('close', () => children.delete(child));
  return child;
}
function stopAll() {
  for (const child of children) child.kill('SIGKILL');
}
process.on('exit', stopAll);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopAll();
    process.exit(130);
  });
}

// Resolves with the first stdout line that parses as JSON and has `key`
// (and, with `value`, that value under it).
function jsonLine(child, key, timeoutMs, want) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${key} line in ${timeoutMs} ms`)), timeoutMs);
    // 'close', not 'exit': stdout may still hold the line when the process exits.
    child.on('close', (code) => reject(new Error(`exited with ${code} before its ${key} line`)));
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      let parsed;
      try {
        parsed = JSON.parse(line);
      } catch {
        return;
      }
      if (parsed && key in parsed && (want === undefined || parsed[key] === want)) {
        clearTimeout(timer);
        resolve(parsed);
      }
    });
  });
}

const closed = (child) =>
  new Promise((resolve) => (children.has(child) ? child.on('close', resolve) : resolve()));

async function main() {
  // NODE_ENV=production, as a deployment runs it: boardgame.io then skips a
  // dev-only check that each move's G is JSON-serializable, and INFO logs.
  const server = start('server.js', ['0'], { NODE_ENV: 'production' });
  const { port } = await jsonLine(server, 'ready', 20_000);

  const driver = start(
    'driver.js',
    ['--server', `http://127.0.0.1:${port}`, '--matches', MATCHES, '--seconds', SECONDS,
      '--warmup', WARMUP, '--players', PLAYERS, '--throws', THROWS],
    {},
  );
  const limit = (Number(WARMUP) + Number(SECONDS) + 60) * 1000;
  const run = jsonLine(driver, 'moves', limit);
  run.catch(() => {});
  // The server's CPU over the driver's window only (the warm-up is not counted).
  await jsonLine(driver, 'window', limit, 'start');
  const before = cpuSeconds(server.pid);
  const machineBefore = machineBusySeconds();
  await jsonLine(driver, 'window', limit, 'end');
  const serverCpu = cpuSeconds(server.pid) - before;
  const machineBusy = machineBusySeconds() - machineBefore;
  const result = await run;
  await closed(driver);
  const otherCpu = machineBusy - serverCpu - result.driver_cpu_s;
  server.kill('SIGTERM');
  await closed(server);

  const perMove = (seconds) => (result.moves ? Number(((seconds * 1000) / result.moves).toFixed(3)) : null);
  console.log(
    JSON.stringify({
      server: `boardgame.io@${require('boardgame.io/package.json').version}`,
      node: process.version,
      matches: result.matches,
      seconds: result.seconds,
      moves: result.moves,
      moves_per_second: result.moves_per_second,
      p50_ms: result.p50_ms,
      p99_ms: result.p99_ms,
      server_cpu_ms_per_move: perMove(serverCpu),
      driver_cpu_ms_per_move: perMove(result.driver_cpu_s),
      matches_finished: result.matches_finished,
      unanswered: result.unanswered,
      mismatched: result.mismatched,
      players: result.players,
      throws: result.throws,
      transport: result.transport,
      // CPU seconds that other processes took from the 2 cores during the run
      // (0-0.2 s on a quiet machine); much more means the numbers are low.
      other_cpu_s: Number(Math.max(0, otherCpu).toFixed(2)),
    }),
  );
  if (otherCpu > 0.05 * result.seconds) {
    console.error(`bench: other processes used ${otherCpu.toFixed(1)} CPU s during the run; numbers are low`);
  }
}

main().catch((error) => {
  console.error(`bench: ${error.message}`);
  process.exitCode = 1;
});
