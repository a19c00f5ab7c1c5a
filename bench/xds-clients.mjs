// Simulated proxies for bench/xds-server.bench.mjs, in a process of their own: each is an ADS
// stream that subscribes as Envoy does (clusters and listeners, then the endpoints of its outbound
// services) and ACKs every response. Messages are encoded and read by hand (only the few fields a
// proxy needs), so the clients cost little CPU next to the server. Driven over IPC:
//   {start: {address, token, first, count, perChannel, outboundsOf}} -> {started}, then {progress}
//   {mark: id} -> clients note the responses that follow; {report: id} -> {report: {...}}; {stop}
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const grpc = createRequire(join(root, 'apps', 'zone', 'package.json'))('@grpc/grpc-js');

const ADS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
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

/** The fields of a DiscoveryResponse a proxy acts on: version_info 1, resources 2 (counted), type_url 4, nonce 5. */
export function decodeResponse(buffer) {
  const out = { versionInfo: '', typeUrl: '', nonce: '', resources: 0 };
  let at = 0;
  const readVarint = () => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const byte = buffer[at++];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
      shift += 7;
    }
  };
  while (at < buffer.length) {
    const key = readVarint();
    const wire = key & 7;
    const number = key >>> 3;
    if (wire === 2) {
      const length = readVarint();
      const value = buffer.subarray(at, at + length);
      at += length;
      if (number === 1) out.versionInfo = value.toString('utf8');
      else if (number === 2) out.resources++;
      else if (number === 4) out.typeUrl = value.toString('utf8');
      else if (number === 5) out.nonce = value.toString('utf8');
    } else if (wire === 0) readVarint();
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
  }
  return out;
}

const now = () => performance.timeOrigin + performance.now();

class Proxy {
  constructor(client, index, token, outbounds, onComplete) {
    this.index = index;
    this.nodeId = `default.dp-${String(index).padStart(5, '0')}`;
    this.outbounds = outbounds;
    this.got = new Set();
    this.complete = false;
    this.onComplete = onComplete;
    this.markedAt = undefined;
    this.afterMark = [];
    const metadata = new grpc.Metadata();
    metadata.set('authorization', token);
    this.call = client.makeBidiStreamRequest(ADS, (b) => b, (b) => b, metadata);
    this.call.on('data', (bytes) => this.receive(decodeResponse(bytes)));
    this.call.on('error', (error) => {
      this.error = error.details ?? error.message;
    });
    this.send({ nodeId: this.nodeId, typeUrl: TYPES.cluster });
    this.send({ typeUrl: TYPES.listener });
  }

  send(request) {
    this.call.write(encodeRequest(request));
  }

  receive(response) {
    if (this.markedAt !== undefined) this.afterMark.push({ at: now(), typeUrl: response.typeUrl });
    const names = response.typeUrl === TYPES.endpoints ? this.outbounds : [];
    this.send({ typeUrl: response.typeUrl, versionInfo: response.versionInfo, nonce: response.nonce, names });
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
let clients = [];
let startedAt = 0;
let completed = 0;

function start({ address, token, first, count, perChannel, outboundsOf }) {
  startedAt = now();
  for (let i = 0; i < count; i++) {
    if (i % perChannel === 0) clients.push(new grpc.Client(address, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }));
    const index = first + i;
    proxies.push(
      new Proxy(clients.at(-1), index, token, outboundsOf[index], () => {
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

process.on('message', (message) => {
  if (message.start) start(message.start);
  else if (message.mark !== undefined) {
    const at = now();
    for (const proxy of proxies) {
      proxy.markedAt = at;
      proxy.afterMark = [];
    }
    process.send({ marked: { id: message.mark, at } });
  } else if (message.report !== undefined) {
    // Per proxy: when it first heard anything after the mark, and how many responses it got.
    const received = proxies.filter((p) => p.afterMark.length > 0).map((p) => ({ index: p.index, first: p.afterMark[0].at - p.markedAt, count: p.afterMark.length, types: [...new Set(p.afterMark.map((r) => r.typeUrl))] }));
    process.send({ report: { id: message.report, received } });
  } else if (message.stop) {
    for (const proxy of proxies) proxy.call.cancel();
    for (const client of clients) client.close();
    proxies = [];
    clients = [];
    process.send({ stopped: true });
  }
});
