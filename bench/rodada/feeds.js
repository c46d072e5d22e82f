// Idle feeds and one event's fan-out (tools/bench_feeds.py, issue 22): opens
// one table feed per token of --tokens (a JSON file, a list of access
// tokens) on --url, each live once its snapshot arrived: the first
// --first (1,000), then {"opened": 1000} and a wait for "more" on stdin (the
// caller counts Redis connections then), then the rest, and prints
// {"ready": N, "open_seconds"} (the wait for "more" not counted). It then waits for "go" on stdin (the caller
// reads the gateway's memory meanwhile, then makes one move), and prints
// {"arrived": [ms, ...]}: when the move's event reached each feed, on the
// machine's monotonic clock (CLOCK_MONOTONIC, as the caller's
// time.monotonic_ns), which the caller timed the move on: the wall clock
// may be stepped while the feeds stay open, and this process's
// performance.timeOrigin is the wall clock at its start. "close" on stdin (or stdin
// ending) closes every socket and exits. A Node client: the Python one's
// CPU, on the same two cores, was taken from the gateway it measures.
//
//   node feeds.js --url ws://127.0.0.1:8000/v1/tables/<id>/events --tokens tokens.json
//        [--first 1000] [--concurrency 200] [--timeout 120]
'use strict';

const fs = require('node:fs');
const readline = require('node:readline');
const { performance } = require('node:perf_hooks');
const WebSocket = require('ws');
const common = require('./common');

const URL_ = common.option('url', '');
const TOKENS = JSON.parse(fs.readFileSync(common.option('tokens', ''), 'utf8'));
const FIRST = Math.min(Number(common.option('first', 1000)), TOKENS.length);
const CONCURRENCY = Number(common.option('concurrency', 200));
const TIMEOUT_S = Number(common.option('timeout', 120));
common.loopbackOnly(URL_);

const now = () => Number(process.hrtime.bigint()) / 1e6; // CLOCK_MONOTONIC, ms

const sockets = [];
let waiting = null; // during the fan-out: how many feeds still wait for the event
let arrived = [];
let done = null;

function open(token) {
  return new Promise((resolve, reject) => {
    // No compression offered (the gateway has it off), no client pings.
    const ws = new WebSocket(URL_, { perMessageDeflate: false, maxPayload: 2 ** 22 });
    let live = false;
    ws.on('open', () => ws.send(JSON.stringify({ token, after_event_id: 0 })));
    ws.on('message', (data) => {
      if (!live) {
        if ('snapshot' in JSON.parse(data)) {
          live = true;
          resolve(ws);
        }
        return;
      }
      if (waiting !== null && !ws.seen && data.includes('"event"')) {
        ws.seen = true;
        arrived.push(now());
        if (--waiting === 0) done();
      }
    });
    ws.on('close', (code, reason) => {
      if (!live) reject(new Error(`closed ${code} ${reason} before the snapshot`));
    });
    ws.on('error', (error) => {
      if (!live) reject(error);
    });
  });
}

async function pool(n, limit, worker) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, n) }, async () => {
      while (next < n) await worker(next++);
    }),
  );
}

function fail(why) {
  console.error(`feeds: ${why}`);
  process.exit(2);
}

async function fanOut() {
  arrived = [];
  waiting = sockets.length;
  const all = new Promise((resolve) => {
    done = resolve;
  });
  const timer = setTimeout(() => fail(`${waiting} feeds had no event after ${TIMEOUT_S} s`), TIMEOUT_S * 1000);
  console.log(JSON.stringify({ go: true }));
  await all;
  clearTimeout(timer);
  console.log(JSON.stringify({ arrived }));
}

async function main() {
  const commands = readline.createInterface({ input: process.stdin });
  const said = (word) =>
    new Promise((resolve) => {
      const heard = (line) => {
        if (line.trim() === word) {
          commands.off('line', heard);
          resolve();
        }
      };
      commands.on('line', heard);
    });
  commands.on('close', () => {
    for (const ws of sockets) ws.terminate();
    process.exit(0);
  });
  const openAll = async (tokens) => {
    const opening = setTimeout(() => fail(`not every feed open after ${TIMEOUT_S} s`), TIMEOUT_S * 1000);
    const start = performance.now();
    await pool(tokens.length, CONCURRENCY, async (i) => {
      sockets.push(await open(tokens[i]));
    });
    clearTimeout(opening);
    return (performance.now() - start) / 1000;
  };
  const more = said('more');
  let seconds = await openAll(TOKENS.slice(0, FIRST));
  console.log(JSON.stringify({ opened: sockets.length }));
  await more;
  seconds += await openAll(TOKENS.slice(FIRST));
  const go = said('go');
  console.log(JSON.stringify({ ready: sockets.length, open_seconds: seconds }));
  await go;
  await fanOut();
  await said('close');
  commands.close();
}

main().catch((error) => fail(error.stack || String(error)));
