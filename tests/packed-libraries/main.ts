import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DomainError, getKind, policyKinds, readResourceBody, type DataplaneSpec, type MeshTimeoutSpec, type Violation } from '@mesh/model';
import { registerCaHooks } from '@mesh/pki';
import { matchPolicies, matchTargetRefPolicies, targetRefProxyOf, type DataplaneResource, type PoliciesByKind } from '@mesh/policy-matcher';
import { ResourceManager } from '@mesh/resource-manager';
import type { StoredResource } from '@mesh/store';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { bootstrapTokens, registerSigningKeyHooks, SigningKeys, TokenService } from '@mesh/tokens';
import { prepareMeshContext, renderProxyConfig } from '@mesh/xds-renderer';

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`failed: ${what}`);
  console.log(`ok: ${what}`);
}

/** The violations the model finds in a body, as `field: message`. */
function violationsOf(kindName: string, body: object): string[] {
  const kind = getKind(kindName);
  try {
    const { spec } = readResourceBody(kind, body);
    return kind.validate(spec).map(({ field, message }: Violation) => `${field}: ${message}`);
  } catch (error) {
    if (error instanceof DomainError) return error.violations.map(({ field, message }) => `${field}: ${message}`);
    throw error;
  }
}

const webBody = {
  type: 'Dataplane',
  mesh: 'default',
  name: 'web-1',
  networking: {
    address: '10.0.0.1',
    inbound: [{ port: 8080, servicePort: 8081, tags: { 'mesh.io/service': 'web', 'mesh.io/protocol': 'http' } }],
    outbound: [{ port: 10001, tags: { 'mesh.io/service': 'backend' } }],
  },
};
const backendBody = {
  type: 'Dataplane',
  mesh: 'default',
  name: 'backend-1',
  networking: { address: '10.0.0.2', inbound: [{ port: 9090, tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http' } }] },
};
const timeoutBody = {
  type: 'MeshTimeout',
  mesh: 'default',
  name: 'backend-timeout',
  spec: { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { http: { requestTimeout: '5s' } } }] },
};

check(violationsOf('Dataplane', webBody).length === 0, 'a valid Dataplane has no violations');
const badDataplane = violationsOf('Dataplane', { ...webBody, networking: { ...webBody.networking, inbound: [{ port: 8080, tags: {} }] } });
check(badDataplane.some((violation) => violation.startsWith('networking.inbound[0].tags')), `an inbound without tags is refused by field path (${badDataplane.join('; ')})`);
check(violationsOf('MeshTimeout', timeoutBody).length === 0, 'a valid MeshTimeout has no violations');
const badTimeout = violationsOf('MeshTimeout', { ...timeoutBody, spec: { ...timeoutBody.spec, to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { http: {} } }] } });
check(badTimeout.some((violation) => violation.startsWith('spec.to[0].default.http')), `an empty http section is refused by field path (${badTimeout.join('; ')})`);

const directory = mkdtempSync(join(tmpdir(), 'mesh-library-'));
const path = join(directory, 'mesh.db');
let store = new SqliteResourceStore({ path });
const manager = new ResourceManager({ store, mode: 'standalone' });
registerCaHooks(manager);
registerSigningKeyHooks(manager);
await manager.ensureDefaultMesh();
for (const body of [webBody, backendBody, timeoutBody]) await manager.apply(getKind(body.type), { mesh: body.mesh, name: body.name }, body);
const keys = new SigningKeys(store);
const tokens = new TokenService({ keys });
await bootstrapTokens({ manager, keys, tokens, mode: 'standalone', bootstrapAdminToken: false });
store.close();

store = new SqliteResourceStore({ path });
/** Every resource of a kind in the mesh, in the shape the matcher and renderer take. */
async function resourcesOf<Spec>(type: string) {
  const { items } = await store.list({ type, mesh: 'default', offset: 0, size: 0 });
  return items.map(({ mesh, name, creationTime, modificationTime, spec }: StoredResource) => ({ mesh, name, creationTime, modificationTime, spec: JSON.parse(spec) as Spec }));
}
const dataplanes: DataplaneResource[] = await resourcesOf<DataplaneSpec>('Dataplane');
const web = dataplanes.find((dataplane) => dataplane.name === 'web-1');
if (!web) throw new Error('web-1 is not in the store');
check(web.spec.networking?.address === '10.0.0.1', 'the dataplane reads back from the SQLite file');
const policies = Object.fromEntries(await Promise.all(policyKinds().map(async (kind) => [kind.name, await resourcesOf(kind.name)] as const))) as PoliciesByKind;
const targetRefPolicies = { MeshTimeout: await resourcesOf<MeshTimeoutSpec>('MeshTimeout') };

const snapshot = { mesh: 'default', policies };
const context = prepareMeshContext({ snapshot, dataplanes });
const targetRef = matchTargetRefPolicies(targetRefProxyOf(web, context.policies), { mesh: 'default', policies: targetRefPolicies });
check(targetRef.kinds.some((rules) => rules.kind === 'MeshTimeout' && rules.policies.some((policy) => policy.name === 'backend-timeout')), 'the MeshTimeout selects the web proxy');
const config = renderProxyConfig({ context, dataplane: web, policies: matchPolicies(web, snapshot), targetRef });
const json = JSON.stringify(config);
check(json.includes('10.0.0.2') && json.includes('"timeout":"5s"'), 'the rendered Envoy configuration routes to backend with the 5s request timeout');

const reopenedTokens = new TokenService({ keys: new SigningKeys(store) });
const token = await reopenedTokens.issueDataplaneToken({ name: 'web-1', mesh: 'default', tags: { 'mesh.io/service': ['web'] }, type: '' }, 3600);
const verified = await reopenedTokens.verifyDataplaneToken(token, { mesh: 'default', name: 'web-1', tags: { 'mesh.io/service': ['web'] } });
check(verified.ok, 'a dataplane token issued from the store verifies');
const wrongProxy = await reopenedTokens.verifyDataplaneToken(token, { mesh: 'default', name: 'web-2', tags: { 'mesh.io/service': ['web'] } });
check(!wrongProxy.ok, 'the token does not verify for another proxy');
store.close();
rmSync(directory, { recursive: true, force: true });
