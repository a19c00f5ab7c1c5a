import { describe, expect, it } from 'vitest';
import { decodeSpec } from '../decode.js';
import { type ExternalServiceSpec, externalServiceKind } from './external-service.js';

const decode = (body: unknown): ExternalServiceSpec => {
  const decoded = decodeSpec(externalServiceKind, body);
  if (!decoded.ok) throw new Error(decoded.message);
  return decoded.spec as ExternalServiceSpec;
};
const validate = (body: unknown) => externalServiceKind.validate(decode(body));

const tags = { 'mesh.io/service': 'backend', version: '1' };
const at = (address: string) => ({ networking: { address }, tags });

describe('ExternalService', () => {
  it('accepts IP, domain and bracketed IPv6 addresses', () => {
    expect(validate(at('192.168.0.1:8080'))).toEqual([]);
    expect(validate(at('example.com:8080'))).toEqual([]);
    expect(validate(at('[fd00:a123::1]:8080'))).toEqual([]);
    expect(
      validate({
        networking: { address: 'httpbin.org:443', tls: { enabled: true, caCert: { inline: 'LS0tLS1CRUdJTg==' }, serverName: 'httpbin.org' } },
        tags: { 'mesh.io/service': 'httpbin', 'mesh.io/protocol': 'http', 'mesh.io/valid': 'abc.0123-789.under_score:90' },
      }),
    ).toEqual([]);
  });

  it('requires networking', () => {
    expect(validate({ tags })).toEqual([{ field: 'networking', message: 'should have networking' }]);
  });

  it('checks the address', () => {
    expect(validate(at(''))).toEqual([{ field: 'networking.address', message: "address can't be empty" }]);
    expect(validate(at('..>_<..:8080'))).toEqual([
      { field: 'networking.address', message: 'address has to be a valid IP address or a domain name' },
    ]);
    expect(validate(at('192.168.0.1:65536'))).toEqual([{ field: 'networking.address', message: 'port must be in the range [1, 65535]' }]);
    const unparsable = [
      { field: 'networking.address', message: 'unable to parse address' },
      { field: 'networking.address', message: 'address has to be a valid IP address or a domain name' },
      { field: 'networking.address', message: 'unable to parse port in address' },
      { field: 'networking.address', message: 'port must be in the range [1, 65535]' },
    ];
    expect(validate(at('http://example.com:8080'))).toEqual(unparsable);
    expect(validate(at('fd00:1234::1:8080'))).toEqual(unparsable);
    expect(validate(at('example.com'))).toEqual(unparsable);
    expect(validate(at('example.com:http'))).toEqual([
      { field: 'networking.address', message: 'unable to parse port in address' },
      { field: 'networking.address', message: 'port must be in the range [1, 65535]' },
    ]);
  });

  it('refuses an empty server name and empty data sources', () => {
    expect(
      validate({
        networking: {
          address: '192.168.0.1:8080',
          tls: { enabled: true, serverName: '', caCert: { inline: '' }, clientCert: { inlineString: '' }, clientKey: { secret: '' } },
        },
        tags,
      }),
    ).toEqual([
      { field: 'networking.tls.serverName', message: 'cannot be empty' },
      { field: 'networking.tls.caCert', message: 'data source cannot be empty' },
      { field: 'networking.tls.clientCert', message: 'data source cannot be empty' },
      { field: 'networking.tls.clientKey', message: 'data source cannot be empty' },
    ]);
  });

  it('checks tags: service required, protocol known, names and values well-formed', () => {
    const withTags = (t: Record<string, string>) => ({ networking: { address: '192.168.0.1:8080' }, tags: t });
    expect(validate({ networking: { address: '192.168.0.1:8080' } })).toEqual([
      { field: 'tags', message: 'mandatory tag "mesh.io/service" is missing' },
    ]);
    expect(validate(withTags({ version: '1' }))).toEqual([{ field: 'tags', message: 'mandatory tag "mesh.io/service" is missing' }]);
    expect(validate(withTags({ 'mesh.io/service': 'backend', version: '' }))).toEqual([
      { field: 'tags["version"]', message: 'tag value must be non-empty' },
    ]);
    expect(validate(withTags({ 'mesh.io/service': 'backend', 'mesh.io/protocol': '' }))).toEqual([
      { field: 'tags["mesh.io/protocol"]', message: 'tag "mesh.io/protocol" has an invalid value "". Allowed values: grpc, http, http2, kafka, tcp' },
      { field: 'tags["mesh.io/protocol"]', message: 'tag value must be non-empty' },
    ]);
    expect(validate(withTags({ 'mesh.io/service': 'backend', 'mesh.io/protocol': 'not-yet-supported-protocol' }))).toEqual([
      {
        field: 'tags["mesh.io/protocol"]',
        message: 'tag "mesh.io/protocol" has an invalid value "not-yet-supported-protocol". Allowed values: grpc, http, http2, kafka, tcp',
      },
    ]);
    expect(validate(withTags({ 'mesh.io/service': 'backend', 'inv@lidT/gN%me': 'value', invalidTagValue: 'inv@lid+t@g' }))).toEqual([
      { field: 'tags["inv@lidT/gN%me"]', message: 'tag name must consist of alphanumeric characters, dots, dashes, slashes and underscores' },
      { field: 'tags["invalidTagValue"]', message: 'tag value must consist of alphanumeric characters, dots, dashes and underscores' },
    ]);
  });

  it('normalises the wire form: snake_case in, zero scalars out, wrappers kept', () => {
    expect(
      decode({
        networking: {
          address: 'httpbin.org:443',
          tls: { enabled: false, ca_cert: { secret: 'ca' }, server_name: '', allowRenegotiation: false, skip_hostname_verification: true },
          disableHostDNSEntry: false,
        },
        tags: { 'mesh.io/service': 'httpbin' },
        extra: 1,
      }),
    ).toEqual({
      networking: {
        address: 'httpbin.org:443',
        tls: { caCert: { secret: 'ca' }, serverName: '', allowRenegotiation: false, skipHostnameVerification: true },
      },
      tags: { 'mesh.io/service': 'httpbin' },
    });
  });

  it('refuses a field of the wrong JSON type', () => {
    expect(decodeSpec(externalServiceKind, { networking: { address: 8080 } })).toMatchObject({ ok: false });
    expect(decodeSpec(externalServiceKind, { networking: { tls: { enabled: 'true' } } })).toMatchObject({ ok: false });
    expect(decodeSpec(externalServiceKind, { tags: { 'mesh.io/service': 1 } })).toMatchObject({ ok: false });
  });
});
