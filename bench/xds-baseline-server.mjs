// The baseline of bench/xds-server.bench.mjs: a bare grpc-js ADS server that answers each proxy's
// first request of a type (and every change of the names it asks for) with a fixed response
// captured from the control plane for one proxy, and ignores ACKs. What one Node process costs to
// serve the same streams and bytes with nothing behind them. Prints its port on stdout. A line
// `push` on stdin sends every open stream the clusters, endpoints and listeners again, as a
// mesh-wide change does: the floor of pushing one to every proxy.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { forEachLengthDelimited } from './proto-fields.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const grpc = createRequire(join(root, 'apps', 'zone', 'package.json'))('@grpc/grpc-js');
const ADS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';

/** By type URL, the raw DiscoveryResponse to send (base64 in the file named by the first argument). */
const responses = new Map(Object.entries(JSON.parse(readFileSync(process.argv[2], 'utf8'))).map(([type, base64]) => [type, Buffer.from(base64, 'base64')]));

/** type_url (4), response_nonce (5) and resource_names (3) of a DiscoveryRequest. */
function readRequest(buffer) {
  const out = { typeUrl: '', nonce: '', names: [] };
  forEachLengthDelimited(buffer, (number, value) => {
    if (number === 4) out.typeUrl = value.toString('utf8');
    else if (number === 5) out.nonce = value.toString('utf8');
    else if (number === 3) out.names.push(value.toString('utf8'));
  });
  return out;
}

const calls = new Set();
const server = new grpc.Server();
server.register(
  ADS,
  (call) => {
    calls.add(call);
    call.on('close', () => calls.delete(call));
    const names = new Map();
    call.on('data', (bytes) => {
      const request = readRequest(bytes);
      const asked = request.names.join('\u0000');
      if (request.nonce !== '' && names.get(request.typeUrl) === asked) return;
      names.set(request.typeUrl, asked);
      const response = responses.get(request.typeUrl);
      if (response) call.write(response);
    });
    call.on('end', () => call.end());
    call.on('error', () => {});
  },
  (b) => b,
  (b) => b,
  'bidi',
);
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) => {
  if (error) throw error;
  process.stdout.write(`${port}\n`);
});
process.stdin.on('data', (chunk) => {
  if (!String(chunk).includes('push')) return;
  for (const call of calls) for (const response of responses.values()) call.write(response);
});
