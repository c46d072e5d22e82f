// Sanity check of the reference setup, for anyone doubting the numbers:
// moves are applied only by the server (no optimistic client update), the
// server refuses illegal moves and wrong credentials, and a whole match runs
// to its end. Starts its own server on a free loopback port; exits 1 on a
// failed check.   node bench/reference/check.js
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');
const { Client } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { Yatzy, BOX_NAMES } = require('./game');

let failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failed++;
};

async function main() {
  const server = spawn(process.execPath, [path.join(__dirname, 'server.js'), '0'], {
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.on('exit', () => server.kill('SIGKILL'));
  const { port } = await new Promise((resolve) => server.stdout.once('data', (d) => resolve(JSON.parse(d))));
  const url = `http://127.0.0.1:${port}`;
  const post = async (p, body) =>
    (await fetch(`${url}/games/yatzy${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })).json();

  const { matchID } = await post('/create', { numPlayers: 1 });
  const { playerCredentials } = await post(`/${matchID}/join`, { playerID: '0', playerName: 'c' });
  const connect = (credentials) => {
    const client = Client({
      game: Yatzy,
      multiplayer: SocketIO({ server: url, socketOpts: { transports: ['websocket'] } }),
      matchID,
      playerID: '0',
      credentials,
      debug: false,
    });
    client.start();
    return client;
  };
  // The state after `send` once the server has answered (or 300 ms passed:
  // a refused move may get no answer at all).
  const after = (client, send) =>
    new Promise((resolve) => {
      const stateID = client.getState()._stateID;
      let timer;
      const stop = client.subscribe((s) => {
        if (s && s._stateID > stateID) done(s);
      });
      const done = (s) => {
        clearTimeout(timer);
        stop();
        resolve(s);
      };
      timer = setTimeout(() => done(client.getState()), 300);
      send();
    });
  const ready = (client) =>
    new Promise((resolve) => {
      const stop = client.subscribe((s) => s && (stop(), resolve()));
    });

  const client = connect(playerCredentials);
  await ready(client);
  let s = client.getState();

  s = await after(client, () => client.moves.score('CHANCE'));
  check(s._stateID === 0 && !('CHANCE' in s.G.cards[0]), 'scoring before throwing is refused');
  s = await after(client, () => client.moves.roll([0]));
  check(s._stateID === 0 && s.G.throws === 0, 'keeping dice on the first throw is refused');

  const thief = connect('not-the-credentials');
  await new Promise((resolve) => setTimeout(resolve, 300));
  check(thief.getState() === null, 'wrong credentials get no state');
  // Past the client's guard: the raw socket.io message a move is sent as.
  const forged = { type: 'MAKE_MOVE', payload: { type: 'roll', args: [], playerID: '0', credentials: 'x' } };
  s = await after(client, () => thief.transport.socket.emit('update', forged, 0, matchID, '0'));
  check(s._stateID === 0 && s.G.throws === 0, 'a move with wrong credentials is refused');
  thief.stop();

  client.moves.roll();
  check(client.getState().G.throws === 0, 'the client does not apply a move itself (client: false)');
  s = await new Promise((resolve) => {
    const stop = client.subscribe((x) => x && x._stateID === 1 && (stop(), resolve(x)));
  });
  check(s.G.throws === 1 && s.G.dice.length === 5 && s.G.dice.every((d) => d >= 1 && d <= 6),
    'the server throws five dice');
  s = await after(client, () => client.moves.roll());
  s = await after(client, () => client.moves.roll([0, 1]));
  check(s._stateID === 3 && s.G.throws === 3, 'second and third throws are applied');
  s = await after(client, () => client.moves.roll([0]));
  check(s._stateID === 3, 'a fourth throw is refused');

  for (const box of BOX_NAMES) {
    if (client.getState().G.throws === 0) await after(client, () => client.moves.roll());
    s = await after(client, () => client.moves.score(box));
  }
  check(s.ctx.gameover && s.ctx.gameover.scores.length === 1, `the match ends after 13 boxes: ${JSON.stringify(s.ctx.gameover)}`);
  s = await after(client, () => client.moves.roll());
  check(s.G.throws === 0, 'no move after the end');
  client.stop();

  console.log(failed ? `${failed} check(s) failed` : 'all checks passed');
  process.exit(failed ? 1 : 0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
