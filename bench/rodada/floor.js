// The floors' load generator: as many concurrent callers as --matches, each
// with its own connection and one call in flight, for a warm-up and then a
// window of --seconds (announced on stdout as the drivers do, see common.js).
// Prints one JSON line with "moves" = calls answered in the window.
//
//   node floor.js --target grpc --address 127.0.0.1:PORT    a unary call with a 16-byte body
//   node floor.js --target http --address 127.0.0.1:PORT    GET / over HTTP/1.1 keep-alive
//   node floor.js --target redis --address 127.0.0.1:PORT   EVALSHA of `return 1` (raw RESP)
//        [--matches 50] [--seconds 10] [--warmup 2]
'use strict';

const http = require('node:http');
const net = require('node:net');
const crypto = require('node:crypto');
const { performance } = require('node:perf_hooks');
const common = require('./common');
const { Channel } = require('./h2grpc');

const TARGET = common.option('target', 'grpc');
const ADDRESS = common.option('address', '127.0.0.1:50051');
const CALLERS = Number(common.option('matches', 50));
const SECONDS = Number(common.option('seconds', 10));
const WARMUP = Number(common.option('warmup', 2));
common.loopbackOnly(ADDRESS);
const [HOST, PORT] = [ADDRESS.replace(/:\d+$/, ''), Number(ADDRESS.split(':').pop())];

// A caller: a function making one call, resolving when it is answered.
async function grpcCaller() {
  const channel = new Channel(ADDRESS);
  const body = Buffer.alloc(16, 7);
  return { call: () => channel.call('/floor.Echo/Echo', body, '', common.MOVE_TIMEOUT_MS), close: () => channel.close() };
}

async function httpCaller() {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const call = () =>
    new Promise((resolve, reject) => {
      const request = http.request({ host: HOST, port: PORT, path: '/', agent }, (reply) => {
        reply.on('data', () => {});
        reply.on('end', () => (reply.statusCode === 200 ? resolve() : reject(new Error(`${reply.statusCode}`))));
      });
      request.on('error', reject);
      request.end();
    });
  return { call, close: () => agent.destroy() };
}

const SCRIPT = 'return 1';
const SHA = crypto.createHash('sha1').update(SCRIPT).digest('hex');
function resp(...args) {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}
async function redisCaller() {
  const socket = net.connect(PORT, HOST);
  socket.setNoDelay(true);
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let waiting = null;
  socket.on('data', (data) => {
    const done = waiting;
    waiting = null;
    if (done) (data[0] === 0x2d ? done.reject(new Error(String(data))) : done.resolve());
  });
  const send = (text) =>
    new Promise((resolve, reject) => {
      waiting = { resolve, reject };
      socket.write(text);
    });
  await send(resp('SCRIPT', 'LOAD', SCRIPT));
  const command = resp('EVALSHA', SHA, '0');
  return { call: () => send(command), close: () => socket.destroy() };
}

const CALLER = { grpc: grpcCaller, http: httpCaller, redis: redisCaller }[TARGET];
if (!CALLER) throw new Error(`unknown target ${TARGET}`);

async function slot(_index, deadline, stats, counting) {
  let caller;
  try {
    caller = await CALLER();
  } catch (error) {
    common.noteError(stats, error);
    return;
  }
  while (performance.now() < deadline) {
    const sentAt = performance.now();
    try {
      await caller.call();
    } catch (error) {
      common.noteError(stats, error);
      break;
    }
    if (counting()) stats.latencies.push(performance.now() - sentAt);
  }
  caller.close();
}

common
  .run({ matches: CALLERS, seconds: SECONDS, warmup: WARMUP, players: 0, throws: 0, path: `floor-${TARGET}`, slot })
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
