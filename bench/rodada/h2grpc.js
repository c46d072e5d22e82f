// A lean gRPC client on node:http2 for the load generators: unary calls only,
// each request and reply one length-prefixed protobuf message (gRPC's
// framing: a compressed flag byte and a 4-byte big-endian length), the
// messages encoded and decoded by protobufjs from the same protos. It spends
// about half the CPU per call of @grpc/grpc-js (no channel state machine,
// interceptors or per-call metadata objects), so on two shared cores the
// driver takes less from the servers, as the reference's raw socket.io does.
'use strict';

const http2 = require('node:http2');
const path = require('node:path');
const protobuf = require('protobufjs');
const { PROTOS } = require('./common');

// The protos, with google/protobuf's from protobufjs's bundled copies (the
// common ones built in, descriptor.proto from its folder).
const PROTOBUFJS = path.dirname(require.resolve('protobufjs/package.json'));
function loadRoot(files) {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    if (target === 'google/protobuf/descriptor.proto') return `${PROTOBUFJS}/${target}`;
    return target.startsWith('google/protobuf/') ? target : `${PROTOS}/${target}`;
  };
  root.loadSync(files, { keepCase: true });
  return root;
}

class GrpcError extends Error {
  constructor(code, message) {
    super(`gRPC status ${code}: ${message}`);
    this.code = code;
  }
}
const DEADLINE_EXCEEDED = 4;

function frame(bytes) {
  const out = Buffer.allocUnsafe(5 + bytes.length);
  out[0] = 0;
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, 5);
  return out;
}

// A call's state lives on its stream (kCall), and the stream's listeners are
// shared functions reading it through `this`: no closures per call.
const kCall = Symbol('call');

function onHeaders(headers) {
  // a trailers-only reply has its status in its headers
  const status = headers['grpc-status'];
  if (status !== undefined) {
    const call = this[kCall];
    call.status = Number(status);
    call.message = headers['grpc-message'];
  }
}

function onData(chunk) {
  const call = this[kCall];
  if (call.body === null) call.body = chunk;
  else call.body = Buffer.concat([call.body, chunk]);
}

function onError(error) {
  const call = this[kCall];
  clearTimeout(call.timer);
  call.reject(error);
}

function onClose() {
  const call = this[kCall];
  clearTimeout(call.timer);
  if (call.status !== 0) {
    const message = call.message ? decodeURIComponent(call.message) : 'no status';
    call.reject(new GrpcError(call.status ?? 2, message));
    return;
  }
  const body = call.body;
  if (body === null || body.length < 5) {
    call.reject(new GrpcError(13, 'no message'));
    return;
  }
  call.resolve(body.subarray(5, 5 + body.readUInt32BE(1)));
}

function onTimeout(stream) {
  stream.close(http2.constants.NGHTTP2_CANCEL);
  stream[kCall].reject(new GrpcError(DEADLINE_EXCEEDED, 'deadline exceeded'));
}

// One HTTP/2 connection (a channel), as one app keeps one.
class Channel {
  constructor(address) {
    this.session = http2.connect(`http://${address}`);
    this.session.on('error', () => {});
    // The request headers of each (path, token, timeout): the same every call
    // (node:http2 copies them, never changes them).
    this.headers = new Map();
  }

  headersFor(path, token, timeoutMs) {
    const key = `${path} ${token} ${timeoutMs}`;
    let headers = this.headers.get(key);
    if (headers === undefined) {
      headers = {
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc',
        te: 'trailers',
        'grpc-timeout': `${timeoutMs}m`,
      };
      if (token) headers.authorization = `Bearer ${token}`;
      this.headers.set(key, headers);
    }
    return headers;
  }

  // One unary call: `path` is /package.Service/Method; `bytes` the encoded
  // request; resolves with the reply's bytes.
  call(path, bytes, token, timeoutMs) {
    const stream = this.session.request(this.headersFor(path, token, timeoutMs), { endStream: false });
    const call = { resolve: null, reject: null, body: null, status: null, message: '', timer: null };
    const promise = new Promise((resolve, reject) => {
      call.resolve = resolve;
      call.reject = reject;
    });
    stream[kCall] = call;
    stream.on('response', onHeaders);
    stream.on('trailers', onHeaders);
    stream.on('data', onData);
    stream.on('error', onError);
    stream.on('close', onClose);
    call.timer = setTimeout(onTimeout, timeoutMs, stream);
    stream.end(frame(bytes));
    return promise;
  }

  close() {
    this.session.close();
  }
}

module.exports = { Channel, GrpcError, DEADLINE_EXCEEDED, loadRoot };
