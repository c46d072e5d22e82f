// The boardgame.io reference server: the Yatzy game, in-memory storage, the
// lobby API and the socket.io transport on one port, loopback only.
//   node server.js [port]      (or PORT=...; 0 picks a free port)
// Prints one JSON line {"ready": true, "port": ..., "pid": ...} once listening.
// Run with NODE_ENV=production, as a deployment would (bench.js does):
// boardgame.io then skips a dev-only check that each move's G is
// JSON-serializable, and its INFO logs.
'use strict';

const { Server } = require('boardgame.io/server');
const { Yatzy } = require('./game');

const port = Number(process.argv[2] ?? process.env.PORT ?? 8000);

// `origins: []` allows no browser origin; the Node driver sends none, and it
// silences the "origins not set" warning.
const server = Server({ games: [Yatzy], origins: [] });

// Server.run() calls app.listen(port, cb) with no host, which binds every
// interface; koa-socket-2 has already replaced app.listen with one that
// forwards its arguments to the http server, so slip the host in.
const listen = server.app.listen;
server.app.listen = (p, cb) => listen.call(server.app, p, '127.0.0.1', cb);

server.run(port).then(({ appServer }) => {
  console.log(JSON.stringify({ ready: true, port: appServer.address().port, pid: process.pid }));
});

// Exit promptly when the bench wrapper stops us.
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
