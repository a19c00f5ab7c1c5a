import type { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { isDnsName, isIp, splitHostPort } from '../validation/address.js';
import { validatePort } from '../validation/scalars.js';
import { validateTags } from '../validation/tags.js';
import { Violations } from '../validation/violations.js';
import { bool, boolValue, message, str, stringMap, strValue } from '../wire.js';
import { type DataSource, DataSourceSchema } from './common.js';
import { checkProtocolTag } from './dataplane.js';

export const ExternalServiceSpecSchema = message({
  networking: message({
    address: str(),
    tls: message({
      enabled: bool(),
      caCert: DataSourceSchema.optional(),
      clientCert: DataSourceSchema.optional(),
      clientKey: DataSourceSchema.optional(),
      allowRenegotiation: boolValue(),
      serverName: strValue(),
      skipHostnameVerification: boolValue(),
    }).optional(),
    disableHostDNSEntry: bool(),
  }).optional(),
  tags: stringMap(),
});
export type ExternalServiceSpec = z.infer<typeof ExternalServiceSpecSchema>;

function validateAddress(v: Violations, address: string | undefined): void {
  const path = 'networking.address';
  if (!address) {
    v.add(path, "address can't be empty");
    return;
  }
  const hostPort = splitHostPort(address);
  if (!hostPort) v.add(path, 'unable to parse address');
  const host = hostPort?.host ?? '';
  if (!isIp(host) && !isDnsName(host)) v.add(path, 'address has to be a valid IP address or a domain name');
  // The port is read as a base-10 uint32; past that range it is unparsable and out of range.
  const portText = hostPort?.port ?? '';
  const isNumber = /^\d+$/.test(portText);
  const port = isNumber ? Number(portText) : 0;
  if (!isNumber || port > 0xffffffff) v.add(path, 'unable to parse port in address');
  validatePort(v, path, port);
}

/** A data source present with nothing in it. */
const isEmptySource = (source: DataSource | undefined): boolean =>
  source !== undefined && !source.secret && !source.inline && !source.inlineString && !source.file;

export function validateExternalService(spec: ExternalServiceSpec) {
  const v = new Violations();
  const networking = spec.networking;
  if (!networking) v.add('networking', 'should have networking');
  else validateAddress(v, networking.address);
  const tls = networking?.tls;
  if (tls?.serverName === '') v.add('networking.tls.serverName', 'cannot be empty');
  for (const source of ['caCert', 'clientCert', 'clientKey'] as const) {
    if (isEmptySource(tls?.[source])) v.add(`networking.tls.${source}`, 'data source cannot be empty');
  }
  validateTags(v, 'tags', spec.tags, { requireService: true, extraMapChecks: [checkProtocolTag] });
  return v.list;
}

export const externalServiceKind = defineKind({
  name: 'ExternalService',
  cliNames: { singular: 'external-service', plural: 'external-services' },
  path: 'external-services',
  scope: 'mesh',
  displayName: 'External Services',
  singularDisplayName: 'External Service',
  inCatalogue: true,
  tagSets: (spec) => [spec.tags ?? {}],
  schema: ExternalServiceSpecSchema,
  validate: validateExternalService,
  affects: 'meshProxies',
  example: demo.inMesh('httpbin', { networking: { address: 'httpbin.org:443', tls: { enabled: true } }, tags: { 'mesh.io/service': 'httpbin', 'mesh.io/protocol': 'http' } }),
});
