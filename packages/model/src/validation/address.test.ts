import { describe, expect, it } from 'vitest';
import { isDnsName, isIp, isUrl, overlapsLoopback, parseRequestUri, parseRequestUriParts, splitHostPort } from './address.js';

describe('address helpers', () => {
  it('parses IP literals as Go does: no leading zeros, no zones, no brackets', () => {
    for (const ip of ['1.2.3.4', '::', '::1', 'fe80::1', '::ffff:1.2.3.4', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:1.2.3.4', '1::2:3:4:5:6:7']) {
      expect(isIp(ip), ip).toBe(true);
    }
    for (const text of ['01.2.3.4', '256.1.1.1', '1.2.3', '1:2:3:4:5:6:7:8:9', '1::2::3', ':1', '1:', 'fe80::1%eth0', '[::1]', '1:2:3:4:5:6:7::8', '1.2.3.4::', 'abcde::1', '']) {
      expect(isIp(text), text).toBe(false);
    }
  });

  it('treats loopback and wildcard addresses as reachable on loopback', () => {
    expect(['127.0.0.1', '::ffff:127.0.0.1', '0.0.0.0', '::'].every(overlapsLoopback)).toBe(true);
    expect(['127.0.0.2', '::1', 'localhost', ''].some(overlapsLoopback)).toBe(false);
  });

  it('accepts govalidator DNS names', () => {
    expect(['example.com', 'a_b.c', 'x.', 'svc-1'].every(isDnsName)).toBe(true);
    expect(['-a', 'a..b', '1.2.3.4', 'a b', ''].some(isDnsName)).toBe(false);
  });

  it('splits host and port like net.SplitHostPort', () => {
    expect(splitHostPort('[::1]:80')).toEqual({ host: '::1', port: '80' });
    expect(splitHostPort(':80')).toEqual({ host: '', port: '80' });
    expect(splitHostPort('a:b:c')).toBeUndefined();
    expect(splitHostPort('[::1]80')).toBeUndefined();
    expect(splitHostPort('host')).toBeUndefined();
  });

  it('reads request URIs like url.ParseRequestURI', () => {
    expect(parseRequestUri('http://a:9411/x')).toEqual({ port: '9411' });
    expect(parseRequestUri('http://[::1]:9411/x')).toEqual({ port: '9411' });
    expect(parseRequestUri('http://a/x')).toEqual({ port: '' });
    expect(parseRequestUri('/healthz')).toEqual({ port: '' });
    expect(parseRequestUri('/a?q=%zz')).toEqual({ port: '' });
    for (const bad of ['http://a:x/', 'healthz', '/a%zz', '', ':80/x', '/a\nb']) expect(parseRequestUri(bad), bad).toBeUndefined();
  });

  it('splits a request URI into the parts a collector address must or must not have', () => {
    expect(parseRequestUriParts('http://user@agent:8126/p?q=1')).toEqual({ scheme: 'http', opaque: '', user: true, host: 'agent', port: '8126', path: '/p', query: 'q=1' });
    expect(parseRequestUriParts('mailto:ops@example.com')).toMatchObject({ scheme: 'mailto', opaque: 'ops@example.com', host: '' });
    expect(parseRequestUriParts('HTTP://[::1]:80')).toMatchObject({ scheme: 'http', host: '[::1]', port: '80', path: '' });
  });

  it('reads URLs as govalidator.IsURL does for the usual addresses', () => {
    for (const url of ['127.0.0.1:5000', 'logstash:5000', 'http://logs.com', 'https://user:pw@zipkin.mesh:9411/api/v2/spans', 'tcp://[::1]:80', 'example.com', 'http://a-b.example.com.']) {
      expect(isUrl(url), url).toBe(true);
    }
    for (const url of ['not_valid_url', 'abc', '', '.example.com', 'sql://db:5432', 'http://exa mple.com', 'http://-bad.com', 'http://host:123456', 'http://a..b']) {
      expect(isUrl(url), url).toBe(false);
    }
  });

  it('refuses a long host name with a character no host has', () => {
    expect(isUrl(`http://${'a'.repeat(2000)}!`)).toBe(false);
  });
});
