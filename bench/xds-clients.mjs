// Simulated proxies for bench/xds-server.bench.mjs, in a process of their own: each is an ADS
// stream that subscribes as Envoy does (clusters and listeners, then the endpoints of its outbound
// services) and ACKs every response. They speak gRPC over Node's HTTP/2 sessions directly and
// encode and read messages by hand (only the few fields a proxy needs), so the clients cost little
// CPU next to the server they share the machine with. Driven over IPC:
//   {start: {address, token, first, count, perChannel, outboundsOf}} -> {started}, then {progress}
//   {mark: id, affected?: [index]} -> clients note the responses that follow, and send {reached: {id}}
//   once every affected proxy of this process has received one, at once when none is its own (the
//   bench waits for that instead of polling reports, which would take CPU from the server it
//   measures); {report: id} -> {report: {...}}; {load: id} -> {load: {id, utilization, delayP99}},
//   this process's event loop since the last {load}; {stop}
// At 10,000 proxies the bench runs several of these processes, each with its own range of proxies.
import { connect, constants } from 'node:http2';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { forEachLengthDelimited } from './proto-fields.mjs';

const ADS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
/**
 * Envoy's default HTTP/2 flow-control windows (256 MiB, for the connection and for each stream):
 * a proxy never holds the control plane's responses back. With Node's defaults (64 KB for the
 * connection its 50 streams share) a push would wait on window updates from this process.
 */
const ENVOY_WINDOW = 256 * 1024 * 1024;
export const TYPES = {
  cluster: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  endpoints: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  listener: 'type.googleapis.com/envoy.config.listener.v3.Listener',
};

function varint(value) {
  const bytes = [];
  while (value > 0x7f) {
    bytes.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  bytes.push(value);
  return Buffer.from(bytes);
}
const field = (number, payload) => [varint((number << 3) | 2), varint(payload.length), payload];
const text = (value) => Buffer.from(value, 'utf8');

/** envoy.service.discovery.v3.DiscoveryRequest: version_info 1, node 2 (id 1, user_agent_name 6), resource_names 3, type_url 4, response_nonce 5. */
export function encodeRequest({ nodeId, versionInfo = '', names = [], typeUrl, nonce = '' }) {
  const parts = [];
  if (versionInfo) parts.push(...field(1, text(versionInfo)));
  if (nodeId) parts.push(...field(2, Buffer.concat([...field(1, text(nodeId)), ...field(6, text('envoy'))])));
  for (const name of names) parts.push(...field(3, text(name)));
  parts.push(...field(4, text(typeUrl)));
  if (nonce) parts.push(...field(5, text(nonce)));
  return Buffer.concat(parts);
}

/** A message as gRPC frames it on the wire: not compressed (0), its length (4 bytes), the message. */
function framed(message) {
  const frame = Buffer.allocUnsafe(5 + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/**
 * An ACK as encodeRequest writes it, framed, from the bytes of its names and type URL encoded once:
 * the clients answer every response, and should cost the machine little next to the server.
 */
function framedAck(namesAndType, versionInfo, nonce) {
  const version = Buffer.byteLength(versionInfo);
  const nonceBytes = Buffer.byteLength(nonce);
  // The caller checked that the version and the nonce are shorter than 128 bytes: one byte of length each.
  const length = 2 + version + namesAndType.length + 2 + nonceBytes;
  const out = Buffer.allocUnsafe(5 + length);
  out[0] = 0;
  out.writeUInt32BE(length, 1);
  let at = 5;
  out[at++] = (1 << 3) | 2;
  out[at++] = version;
  at += out.write(versionInfo, at, 'utf8');
  at += namesAndType.copy(out, at);
  out[at++] = (5 << 3) | 2;
  out[at++] = nonceBytes;
  out.write(nonce, at, 'utf8');
  return out;
}

/**
 * A bidirectional gRPC call on an HTTP/2 session: requests framed as above, responses cut out of
 * the data as it comes, the call's status read from the trailers.
 */
class AdsCall {
  constructor(session, token, onMessage, onError) {
    this.stream = session.request({ ':method': 'POST', ':path': ADS, 'content-type': 'application/grpc', te: 'trailers', authorization: token });
    let partial;
    this.stream.on('data', (chunk) => {
      const data = partial ? Buffer.concat([partial, chunk]) : chunk;
      let at = 0;
      while (data.length - at >= 5) {
        const length = data.readUInt32BE(at + 1);
        if (data.length - at - 5 < length) break;
        onMessage(data.subarray(at + 5, at + 5 + length));
        at += 5 + length;
      }
      partial = at < data.length ? data.subarray(at) : undefined;
    });
    const status = (headers) => {
      const code = headers['grpc-status'];
      if (code !== undefined && code !== '0') onError(decodeURIComponent(String(headers['grpc-message'] ?? `gRPC status ${code}`)));
    };
    this.stream.on('response', status);
    this.stream.on('trailers', status);
    this.stream.on('error', (error) => onError(error.message));
  }

  write(frame) {
    this.stream.write(frame);
  }

  cancel() {
    this.stream.close(constants.NGHTTP2_CANCEL);
  }
}

/** The fields of a DiscoveryResponse a proxy acts on: version_info 1, resources 2 (counted), type_url 4, nonce 5. */
export function decodeResponse(buffer) {
  const out = { versionInfo: '', typeUrl: '', nonce: '', resources: 0 };
  forEachLengthDelimited(buffer, (number, value) => {
    if (number === 1) out.versionInfo = value.toString('utf8');
    else if (number === 2) out.resources++;
    else if (number === 4) out.typeUrl = value.toString('utf8');
    else if (number === 5) out.nonce = value.toString('utf8');
  });
  return out;
}

const now = () => performance.timeOrigin + performance.now();

class Proxy {
  constructor(session, index, token, outbounds, onComplete) {
    this.index = index;
    this.nodeId = `default.dp-${String(index).padStart(5, '0')}`;
    this.outbounds = outbounds;
    this.got = new Set();
    this.complete = false;
    this.onComplete = onComplete;
    this.markedAt = undefined;
    this.afterMark = [];
    this.affected = false;
    /** Per type URL, the names and type URL of its ACKs, encoded. */
    this.ackPrefixes = new Map();
    this.call = new AdsCall(
      session,
      token,
      (bytes) => this.receive(decodeResponse(bytes)),
      (error) => (this.error ??= error),
    );
    this.send({ nodeId: this.nodeId, typeUrl: TYPES.cluster });
    this.send({ typeUrl: TYPES.listener });
  }

  send(request) {
    this.call.write(framed(encodeRequest(request)));
  }

  receive(response) {
    if (this.markedAt !== undefined) {
      this.afterMark.push({ at: now(), typeUrl: response.typeUrl });
      if (this.afterMark.length === 1 && this.affected) reachedOne();
    }
    const names = response.typeUrl === TYPES.endpoints ? this.outbounds : [];
    let ack = this.ackPrefixes.get(response.typeUrl);
    if (!ack) this.ackPrefixes.set(response.typeUrl, (ack = encodeRequest({ typeUrl: response.typeUrl, names })));
    const { versionInfo, nonce } = response;
    const oneByteLengths = Buffer.byteLength(versionInfo) < 128 && Buffer.byteLength(nonce) < 128;
    this.call.write(oneByteLengths ? framedAck(ack, versionInfo, nonce) : framed(encodeRequest({ typeUrl: response.typeUrl, versionInfo, nonce, names })));
    if (response.typeUrl === TYPES.cluster && !this.got.has(TYPES.cluster)) this.send({ typeUrl: TYPES.endpoints, names: this.outbounds });
    this.got.add(response.typeUrl);
    if (!this.complete && this.got.size === 3) {
      this.complete = true;
      this.completedAt = now();
      this.onComplete(this);
    }
  }
}

let proxies = [];
let sessions = [];
let startedAt = 0;
let completed = 0;
/** The mark whose affected proxies are being waited for, and how many have not received anything yet. */
let awaited;

function reachedOne() {
  if (awaited && --awaited.left === 0) {
    process.send({ reached: { id: awaited.id } });
    awaited = undefined;
  }
}

function start({ address, token, first, count, perChannel, outboundsOf }) {
  startedAt = now();
  for (let i = 0; i < count; i++) {
    if (i % perChannel === 0) {
      const session = connect(`http://${address}`, { settings: { initialWindowSize: ENVOY_WINDOW } });
      session.on('connect', () => session.setLocalWindowSize(ENVOY_WINDOW));
      session.on('error', () => {});
      sessions.push(session);
    }
    const index = first + i;
    proxies.push(
      new Proxy(sessions.at(-1), index, token, outboundsOf[index], () => {
        completed++;
        if (completed === count) process.send({ allComplete: { seconds: (now() - startedAt) / 1000 } });
      }),
    );
  }
  process.send({ started: count });
  const timer = setInterval(() => {
    process.send({ progress: { completed, errors: proxies.filter((p) => p.error).length, firstError: proxies.find((p) => p.error)?.error } });
    if (completed === count) clearInterval(timer);
  }, 1000);
}

/** This process's event loop: how busy, and how late its callbacks ran (whether the clients kept up). */
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
let loadSince = performance.eventLoopUtilization();

process.on('message', (message) => {
  if (message.start) start(message.start);
  else if (message.mark !== undefined) {
    const at = now();
    const affected = new Set(message.affected ?? []);
    for (const proxy of proxies) {
      proxy.markedAt = at;
      proxy.afterMark = [];
      proxy.affected = affected.has(proxy.index);
    }
    const mine = proxies.reduce((sum, proxy) => sum + (proxy.affected ? 1 : 0), 0);
    awaited = mine > 0 ? { id: message.mark, left: mine } : undefined;
    process.send({ marked: { id: message.mark, at } });
    if (mine === 0) process.send({ reached: { id: message.mark } });
  } else if (message.report !== undefined) {
    // Per proxy: when it first heard anything after the mark, and how many responses it got.
    const received = proxies.filter((p) => p.afterMark.length > 0).map((p) => ({ index: p.index, first: p.afterMark[0].at - p.markedAt, count: p.afterMark.length, types: [...new Set(p.afterMark.map((r) => r.typeUrl))] }));
    process.send({ report: { id: message.report, received } });
  } else if (message.load !== undefined) {
    const utilization = performance.eventLoopUtilization(loadSince).utilization;
    loadSince = performance.eventLoopUtilization();
    process.send({ load: { id: message.load, utilization, delayP99: loopDelay.percentile(99) / 1e6 } });
    loopDelay.reset();
  } else if (message.stop) {
    for (const proxy of proxies) proxy.call.cancel();
    for (const session of sessions) session.close();
    proxies = [];
    sessions = [];
    process.send({ stopped: true });
  }
});
