import { describe, expect, it } from 'vitest';
import { fractionalPercent } from './filters.js';
import { destinationClusterName, inboundListenerName, outboundListenerName, serializeTagsHeader, sniFromTags, sourcesRegex } from './names.js';
import { commonProtocolOf } from './protocol.js';

describe('resource names', () => {
  it('hashes every tag of a subset into the cluster name', () => {
    expect(destinationClusterName({ 'mesh.io/service': 'backend' })).toBe('backend');
    expect(destinationClusterName({ 'mesh.io/service': 'backend', version: 'v1' })).toBe('backend-682413cd9359626a');
    expect(destinationClusterName({ version: 'v2', 'mesh.io/service': 'backend' })).toBe('backend-a10be8a87b9201bd');
    expect(destinationClusterName({ 'mesh.io/service': 'web', 'mesh.io/protocol': 'http' })).toBe('web-f9f39c2c3421f6b7');
  });

  it('marks destinations of another mesh', () => {
    expect(destinationClusterName({ 'mesh.io/service': 'edge', 'mesh.io/mesh': 'other' })).toMatch(/^edge-[0-9a-f]{16}_other$/);
  });

  it('brackets IPv6 listener addresses', () => {
    expect(inboundListenerName('10.0.0.1', 8080)).toBe('inbound:10.0.0.1:8080');
    expect(outboundListenerName('fd00::1', 80)).toBe('outbound:[fd00::1]:80');
  });
});

describe('tag encodings', () => {
  it('serializes the tags of all inbounds, values merged and sorted', () => {
    expect(serializeTagsHeader([{ 'mesh.io/service': 'web', 'mesh.io/protocol': 'http' }])).toBe('&mesh.io/protocol=http&&mesh.io/service=web&');
    expect(serializeTagsHeader([{ 'mesh.io/service': 'web' }, { 'mesh.io/service': 'api', zone: 'a' }])).toBe('&mesh.io/service=api,web&&zone=a&');
  });

  it('matches sources by a regex over the tags header', () => {
    expect(sourcesRegex([{ 'mesh.io/service': 'frontend' }])).toBe('.*&mesh.io/service=[^&]*frontend[,&].*');
    expect(sourcesRegex([{ 'mesh.io/service': '*' }])).toBe('.*&mesh.io/service=.*');
    expect(sourcesRegex([{ 'mesh.io/service': 'a.b' }, { version: 'v1' }])).toBe('(.*&mesh.io/service=[^&]*a\\.b[,&].*|.*&version=[^&]*v1[,&].*)');
  });

  it('names the upstream by SNI', () => {
    expect(sniFromTags({ 'mesh.io/service': 'backend', mesh: 'default' })).toBe('backend{mesh=default}');
    expect(sniFromTags({ 'mesh.io/service': 'backend', version: 'v1', mesh: 'default' })).toBe('backend{mesh=default,version=v1}');
  });
});

describe('policy values', () => {
  it('picks the coarsest denominator that keeps a percentage exact', () => {
    expect(fractionalPercent(50)).toEqual({ numerator: 50 });
    expect(fractionalPercent(12.5)).toEqual({ numerator: 1250, denominator: 'TEN_THOUSAND' });
    expect(fractionalPercent(33.333)).toEqual({ numerator: 333330, denominator: 'MILLION' });
  });

  it('infers the protocol all endpoints share', () => {
    const tagged = (protocol?: string): { tags: Record<string, string> } => ({ tags: protocol ? { 'mesh.io/protocol': protocol } : {} });
    expect(commonProtocolOf([tagged('http'), tagged('http')])).toBe('http');
    expect(commonProtocolOf([tagged('http'), tagged('http2')])).toBe('tcp');
    expect(commonProtocolOf([tagged('grpc'), tagged('http2')])).toBe('http2');
    expect(commonProtocolOf([tagged('http'), tagged()])).toBe('unknown');
    expect(commonProtocolOf([])).toBe('unknown');
  });
});
