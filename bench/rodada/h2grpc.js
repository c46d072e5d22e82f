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

// One HTTP/2 connection (a channel), as one app keeps one.
class Channel {
  constructor(address) {
    this.session = http2.connect(`http://${address}`);
    this.session.on('error', () => {});
  }

  // One unary call: `path` is /package.Service/Method; `bytes` the encoded
  // request; resolves with the reply's bytes.
  call(path, bytes, token, timeoutMs) {
    return new Promise((resolve, reject) => {
      const headers = {
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc',
        te: 'trailers',
        'grpc-timeout': `${timeoutMs}m`,
      };
      if (token) headers.authorization = `Bearer ${token}`;
      const stream = this.session.request(headers, { endStream: false });
      const chunks = [];
      let status = null;
      let message = '';
      const settle = (h) => {
        if (h['grpc-status'] !== undefined) {
          status = Number(h['grpc-status']);
          message = decodeURIComponent(h['grpc-message'] || '');
        }
      };
      stream.on('response', settle); // a trailers-only reply has its status here
      stream.on('trailers', settle);
      stream.on('data', (chunk) => chunks.push(chunk));
      const timer = setTimeout(() => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        reject(new GrpcError(DEADLINE_EXCEEDED, 'deadline exceeded'));
      }, timeoutMs);
      stream.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      stream.on('close', () => {
        clearTimeout(timer);
        if (status !== 0) return reject(new GrpcError(status ?? 2, message || 'no status'));
        const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        resolve(body.subarray(5, 5 + body.readUInt32BE(1)));
      });
      stream.end(frame(bytes));
    });
  }

  close() {
    this.session.close();
  }
}

module.exports = { Channel, GrpcError, DEADLINE_EXCEEDED, loadRoot };
