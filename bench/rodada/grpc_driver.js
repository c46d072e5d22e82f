// Load generator for Rodada over gRPC, lean: bare HTTP/2 (node:http2, see
// h2grpc.js) with protobufjs messages, N concurrent Yatzy matches, solo or
// duel, each move sent as soon as the previous one's answer arrives, the
// reference driver's strategy and move mix. Prints one JSON line (and the
// window's edges, see common.js).
//
//   node grpc_driver.js --target service --address 127.0.0.1:50051[,127.0.0.1:50052…] --tokens tokens.json
//   node grpc_driver.js --target platform --address 127.0.0.1:50050
//        [--matches 10] [--seconds 10] [--warmup 2] [--players 1|2] [--throws 3]
//
// --target service: "the gRPC path" of issue 15, the game service's own
//   rodada.common.v1.MatchService (CreateMatch with the platform's token, Act
//   with each seat's), as the platform's callers reach it; no gateway.
//   --tokens names a JSON file {"platform": token, "users": [{"user_id",
//   "token"}, ...]} with at least matches × players users (the bench mints
//   them with the stack's signing key).
// --target platform: the gateway's rodada.platform.v1.PlatformService, as a
//   mobile app plays: LogInAsGuest per seat, CreateTable, JoinTable with the
//   invite, StartTable, Act.
//
// Each seat has its own channel (its own HTTP/2 connection), kept for the
// slot's matches as an app keeps its channel. A move counts when its answer's
// snapshot shows it (one throw more with the kept dice, or the box filled
// with the previewed points).
'use strict';

const fs = require('node:fs');
const { performance } = require('node:perf_hooks');
const common = require('./common');
const protobuf = require('protobufjs');
const { Channel, DEADLINE_EXCEEDED, loadRoot } = require('./h2grpc');

const TARGET = common.option('target', 'service');
// Several replicas (comma-separated): the seats' channels are dealt over them in turn.
const ADDRESSES = common.option('address', '127.0.0.1:50051').split(',');
const MATCHES = Number(common.option('matches', 10));
const SECONDS = Number(common.option('seconds', 10));
const WARMUP = Number(common.option('warmup', 2));
const PLAYERS = Number(common.option('players', 1));
const THROWS = Number(common.option('throws', 3));
const TOKENS = common.option('tokens', '');
if (!['service', 'platform'].includes(TARGET)) throw new Error(`unknown target ${TARGET}`);
if (![1, 2].includes(PLAYERS)) throw new Error('--players is 1 or 2');
ADDRESSES.forEach(common.loopbackOnly);

const root = loadRoot([
  'rodada/common/v1/match.proto',
  'rodada/platform/v1/platform.proto',
  'rodada/yatzy/v1/yatzy.proto',
]);
const type = (name) => root.lookupType(name);
const CONVERT = { enums: String, longs: Number, defaults: true, arrays: true };
const Action = type('rodada.yatzy.v1.Action');
const View = type('rodada.yatzy.v1.View');
const ACTION_URL = 'type.googleapis.com/rodada.yatzy.v1.Action';

// Per method: its path and its request and reply messages.
function method(service, name, request, reply) {
  return { path: `/${service}/${name}`, request: type(request), reply: type(reply) };
}
const MATCH = 'rodada.common.v1.MatchService';
const PLATFORM = 'rodada.platform.v1.PlatformService';
const M = {
  CreateMatch: method(MATCH, 'CreateMatch', 'rodada.common.v1.CreateMatchRequest', 'rodada.common.v1.CreateMatchResponse'),
  ActMatch: method(MATCH, 'Act', 'rodada.common.v1.ActRequest', 'rodada.common.v1.ActResponse'),
  LogInAsGuest: method(PLATFORM, 'LogInAsGuest', 'rodada.platform.v1.LogInAsGuestRequest', 'rodada.platform.v1.LogInAsGuestResponse'),
  CreateTable: method(PLATFORM, 'CreateTable', 'rodada.platform.v1.CreateTableRequest', 'rodada.platform.v1.CreateTableResponse'),
  JoinTable: method(PLATFORM, 'JoinTable', 'rodada.platform.v1.JoinTableRequest', 'rodada.platform.v1.JoinTableResponse'),
  StartTable: method(PLATFORM, 'StartTable', 'rodada.platform.v1.StartTableRequest', 'rodada.platform.v1.StartTableResponse'),
  ActTable: method(PLATFORM, 'Act', 'rodada.platform.v1.ActRequest', 'rodada.platform.v1.ActResponse'),
};

// A call of the slot's setup (sign-in, a new match): the reply as a plain
// object, enums as their names.
async function unary(channel, m, request, token) {
  const bytes = m.request.encode(m.request.fromObject(request)).finish();
  const reply = await channel.call(m.path, bytes, token, common.MOVE_TIMEOUT_MS);
  return m.reply.toObject(m.reply.decode(reply), CONVERT);
}

// A move's call is the hot path: the request encoded from a plain object
// (its values already of the fields' types), the reply decoded as protobufjs
// messages (no toObject), of only the fields the driver reads: a snapshot's
// version, to_act, status and view (an Any holding the Yatzy View, decoded
// in full); the decoder skips the others. Enums stay numbers.
const STATUS = root.lookupEnum('rodada.common.v1.MatchStatus').values;
const lean = new protobuf.Root();
lean.add(protobuf.Type.fromJSON('Any', type('google.protobuf.Any').toJSON()));
const snapshotFields = type('rodada.common.v1.Snapshot').fields;
const LeanSnapshot = new protobuf.Type('Snapshot');
for (const name of ['version', 'to_act', 'status', 'view']) {
  const f = snapshotFields[name];
  const fieldType = name === 'status' ? 'int32' : name === 'view' ? 'Any' : f.type;
  LeanSnapshot.add(new protobuf.Field(name, f.id, fieldType, f.repeated ? 'repeated' : undefined));
}
lean.add(LeanSnapshot);
// A reply holding a snapshot in its field `field`, the rest skipped.
function leanReply(m, field, name) {
  const t = new protobuf.Type(name).add(new protobuf.Field(field, m.reply.fields[field].id, 'Snapshot'));
  lean.add(t);
  return t;
}
const LEAN = {
  ActMatch: leanReply(M.ActMatch, 'snapshot', 'MatchActResponse'),
  ActTable: leanReply(M.ActTable, 'match', 'PlatformActResponse'),
};
lean.resolveAll();

// A call whose reply is decoded by `reply` (a protobufjs type), not converted.
async function leanUnary(channel, m, reply, request, token) {
  const bytes = m.request.encode(request).finish();
  return reply.decode(await channel.call(m.path, bytes, token, common.MOVE_TIMEOUT_MS));
}

function packAction(move) {
  return { type_url: ACTION_URL, value: Action.encode(move).finish() };
}
function viewOf(snapshot) {
  return View.decode(snapshot.view.value);
}

const tokens = TARGET === 'service' ? JSON.parse(fs.readFileSync(TOKENS, 'utf8')) : null;
if (tokens && tokens.users.length < MATCHES * PLAYERS) {
  throw new Error(`${TOKENS} has ${tokens.users.length} users, ${MATCHES * PLAYERS} needed`);
}

// A slot's seats: a channel and who sits there.
async function seatsFor(index) {
  const seats = [];
  for (let seat = 0; seat < PLAYERS; seat++) {
    const channel = new Channel(ADDRESSES[(index * PLAYERS + seat) % ADDRESSES.length]);
    if (TARGET === 'service') {
      const user = tokens.users[index * PLAYERS + seat];
      seats.push({ channel, token: user.token, user_id: user.user_id });
    } else {
      const { session } = await unary(channel, M.LogInAsGuest, { name: `bench${index}-${seat}` });
      seats.push({ channel, token: session.access_token, user_id: session.user.id });
    }
  }
  return seats;
}

// A new match for the slot's seats: its first snapshot (decoded in full, as
// protobufjs messages: the same shape as a move's lean one).
async function newMatch(seats) {
  if (TARGET === 'service') {
    const { snapshot } = await leanUnary(
      seats[0].channel,
      M.CreateMatch,
      M.CreateMatch.reply,
      { seats: seats.map((s) => ({ user_id: s.user_id, display_name: 'bench' })) },
      tokens.platform,
    );
    return { id: snapshot.match_id, snapshot };
  }
  const { table } = await unary(seats[0].channel, M.CreateTable, { game: 'yatzy', seats: PLAYERS }, seats[0].token);
  for (const seat of seats.slice(1)) {
    await unary(seat.channel, M.JoinTable, { invite_code: table.invite_code }, seat.token);
  }
  const { match } = await leanUnary(seats[0].channel, M.StartTable, M.StartTable.reply, { table_id: table.id }, seats[0].token);
  return { id: table.id, snapshot: match };
}

// A move: its call's promise of the reply's bytes (decoded by answerOf).
const ACT = TARGET === 'service' ? M.ActMatch : M.ActTable;
const ID = TARGET === 'service' ? 'match_id' : 'table_id';
const ANSWER = TARGET === 'service' ? LEAN.ActMatch : LEAN.ActTable;
function act(seat, id, version, move) {
  const request = { [ID]: id, expected_version: version, action: packAction(move) };
  return seat.channel.call(ACT.path, ACT.request.encode(request).finish(), seat.token, common.MOVE_TIMEOUT_MS);
}
// The move's answer: the snapshot after it.
function answerOf(bytes) {
  const reply = ANSWER.decode(bytes);
  return TARGET === 'service' ? reply.snapshot : reply.match;
}

async function slot(index, deadline, stats, counting) {
  let seats;
  try {
    seats = await seatsFor(index);
  } catch (error) {
    common.noteError(stats, error);
    return;
  }
  while (performance.now() < deadline) {
    let match;
    try {
      match = await newMatch(seats);
    } catch (error) {
      common.noteError(stats, error);
      continue;
    }
    stats.started++;
    let snapshot = match.snapshot;
    // The view of the last snapshot, decoded once: the answer's, checked,
    // is the next move's `before`.
    let view = viewOf(snapshot);
    // Whoever is to act moves from the last snapshot (Yatzy's dice, throws
    // and preview are the mover's own after its move, public before it).
    while (snapshot.status === STATUS.MATCH_STATUS_ACTIVE && performance.now() < deadline) {
      const mover = snapshot.to_act[0];
      const before = view;
      const move = common.nextMove(before, THROWS);
      const sentAt = performance.now();
      let answer;
      try {
        answer = answerOf(await act(seats[mover], match.id, snapshot.version, move));
      } catch (error) {
        if (error.code === DEADLINE_EXCEEDED) stats.unanswered++;
        else common.noteError(stats, error);
        snapshot = null;
        break;
      }
      const latency = performance.now() - sentAt;
      view = viewOf(answer);
      if (answer.version > snapshot.version && common.applied(before, view, mover, move)) {
        if (counting()) stats.latencies.push(latency);
      } else {
        stats.mismatched++;
      }
      snapshot = answer;
    }
    if (snapshot && snapshot.status === STATUS.MATCH_STATUS_FINISHED) stats.finished++;
  }
  for (const seat of seats) seat.channel.close();
}

common
  .run({
    matches: MATCHES,
    seconds: SECONDS,
    warmup: WARMUP,
    players: PLAYERS,
    throws: THROWS,
    path: `grpc-${TARGET}`,
    slot,
  })
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
