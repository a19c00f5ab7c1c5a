// Subsets and rules, with the facts of the reference's own test cases (its rule tables and their
// expected rules), rewritten for this matcher.
import { SERVICE_TAG } from '@mesh/model';
import { describe, expect, it } from 'vitest';
import { type TargetRefRule, targetRefRulesOf, matchTargetRefPolicies } from './target-ref-match.js';
import type { TargetRefPoliciesByKind } from './target-ref-policies.js';
import { computeRule, type Rule } from './target-ref-rules.js';
import { targetRefProxyOf } from './target-ref-select.js';
import { intersects, isSubset, type Subset, subsetCombinations, type SubsetTag } from './target-ref-subset.js';
import { dataplane, snapshotOf, targetRefPolicy, targetRefSnapshotOf } from './test-fixtures.js';

/** `k=v` or `k!=v`: a subset written compactly. */
const tag = (text: string): SubsetTag => {
  const not = text.includes('!=');
  const [key, value] = text.split(not ? '!=' : '=') as [string, string];
  return { key, value, not };
};
const subset = (...tags: string[]): Subset => tags.map(tag);
const text = (tags: Subset): string[] => tags.map((t) => `${t.key}${t.not ? '!=' : '='}${t.value}`);

/** A rule as the tables below write it. */
const view = (rule: Rule<{ name: string }>) => ({ subset: text(rule.subset), conf: rule.conf, origins: rule.origins.map((origin) => origin.name) });

const SERVICE = SERVICE_TAG;

describe('subset combinations', () => {
  it('negates tags like a counter from the first tag up, the all-positive combination last', () => {
    expect(subsetCombinations(subset('k1=v1', 'k2=v2', 'k3=v3')).map(text)).toEqual([
      ['k1!=v1', 'k2=v2', 'k3=v3'],
      ['k1=v1', 'k2!=v2', 'k3=v3'],
      ['k1!=v1', 'k2!=v2', 'k3=v3'],
      ['k1=v1', 'k2=v2', 'k3!=v3'],
      ['k1!=v1', 'k2=v2', 'k3!=v3'],
      ['k1=v1', 'k2!=v2', 'k3!=v3'],
      ['k1!=v1', 'k2!=v2', 'k3!=v3'],
      ['k1=v1', 'k2=v2', 'k3=v3'],
    ]);
  });

  it('gives the empty subset for no tags', () => {
    expect(subsetCombinations([])).toEqual([[]]);
  });

  it('keeps one positive value per key, or all of its negations, and skips contradictions', () => {
    expect(subsetCombinations(subset('zone=us-east', 'env=dev', 'env=prod')).map(text)).toEqual([
      ['zone=us-east', 'env=prod'],
      ['zone!=us-east', 'env=prod'],
      ['zone=us-east', 'env=dev'],
      ['zone!=us-east', 'env=dev'],
      ['zone=us-east', 'env!=dev', 'env!=prod'],
      ['zone!=us-east', 'env!=dev', 'env!=prod'],
    ]);
  });
});

describe('isSubset(s1, s2): whether s2 lies within s1', () => {
  it.each([
    [['service=backend'], ['service!=frontend', 'version=v2'], false],
    [['service=backend'], ['service=backend', 'version=v2'], true],
    [['service!=backend'], ['service!=backend', 'version=v2'], true],
    [['service!=backend', 'version!=v1'], ['service!=backend', 'version!=v1', 'zone=east'], true],
    [[], ['service!=backend', 'version!=v1', 'zone=east'], true],
    [['service=backend', 'version=v1'], [], false],
    [['key1!=val1'], ['key1=val2'], true],
    [['key1!=val1'], ['key1=val2', 'key2=val3'], true],
  ])('%j holds %j: %s', (s1, s2, expected) => {
    expect(isSubset(subset(...s1), subset(...s2))).toBe(expected);
  });
});

describe('intersects', () => {
  it.each([
    [['service=backend'], ['service!=frontend', 'version=v2'], true],
    [['service=backend'], ['service=frontend', 'version=v2'], false],
    [['service!=backend'], ['service!=backend', 'version=v2'], true],
    [['service!=backend', 'version!=v1'], ['service!=backend', 'version!=v1', 'zone=east'], true],
    [[], ['service!=backend', 'version!=v1', 'zone=east'], true],
    [['service!=backend', 'version!=v1'], [], true],
  ])('%j and %j: %s', (s1, s2, expected) => {
    expect(intersects(subset(...s1), subset(...s2))).toBe(expected);
  });
});

/** The rules of the one inbound `127.0.0.1:80` of a proxy of service `web`, for the policies given. */
function inboundRules(policies: TargetRefPoliciesByKind) {
  const proxy = targetRefProxyOf(dataplane('dp-1', { address: '127.0.0.1', inbound: [{ port: 80, tags: { [SERVICE]: 'web' } }] }), snapshotOf({}));
  const [kind] = matchTargetRefPolicies(proxy, targetRefSnapshotOf(policies)).kinds;
  expect(kind?.from.map((inbound) => `${inbound.address}:${inbound.port}`)).toEqual(['127.0.0.1:80']);
  return (kind?.from[0]?.rules ?? []).map((rule: TargetRefRule) => view(rule));
}

const mtp = (name: string, from: Array<[object, string]>) =>
  targetRefPolicy('MeshTrafficPermission', name, { targetRef: { kind: 'Mesh' }, from: from.map(([targetRef, action]) => ({ targetRef, default: { action } })) });
const MESH = { kind: 'Mesh' };
const meshSubset = (tags: Record<string, string>) => ({ kind: 'MeshSubset', tags });
const meshService = (name: string) => ({ kind: 'MeshService', name });

describe('rules of `from` entries', () => {
  it('01: two values of one key and another key, over a Mesh default', () => {
    const policies = [mtp('mtp-1', [[MESH, 'Allow'], [meshSubset({ zone: 'us-east' }), 'Deny'], [meshSubset({ env: 'dev' }), 'Allow'], [meshSubset({ env: 'prod' }), 'Allow']])];
    const mtp1 = ['mtp-1'];
    expect(inboundRules({ MeshTrafficPermission: policies })).toEqual([
      { subset: ['env=prod', 'zone=us-east'], conf: { action: 'Allow' }, origins: mtp1 },
      { subset: ['env=dev', 'zone=us-east'], conf: { action: 'Allow' }, origins: mtp1 },
      { subset: ['env!=dev', 'env!=prod', 'zone=us-east'], conf: { action: 'Deny' }, origins: mtp1 },
      { subset: ['env=prod', 'zone!=us-east'], conf: { action: 'Allow' }, origins: mtp1 },
      { subset: ['env=dev', 'zone!=us-east'], conf: { action: 'Allow' }, origins: mtp1 },
      { subset: ['env!=dev', 'env!=prod', 'zone!=us-east'], conf: { action: 'Allow' }, origins: mtp1 },
    ]);
  });

  it('02: three different keys, no Mesh entry: the all-negated subset gets no rule', () => {
    const policies = [mtp('mtp-1', [[meshSubset({ version: 'v1' }), 'Allow'], [meshSubset({ zone: 'us-east' }), 'Deny'], [meshSubset({ env: 'dev' }), 'Allow']])];
    const rule = (subset: string[], action: string) => ({ subset, conf: { action }, origins: ['mtp-1'] });
    expect(inboundRules({ MeshTrafficPermission: policies })).toEqual([
      rule(['env=dev', 'version=v1', 'zone=us-east'], 'Allow'),
      rule(['env!=dev', 'version=v1', 'zone=us-east'], 'Deny'),
      rule(['env=dev', 'version!=v1', 'zone=us-east'], 'Allow'),
      rule(['env=dev', 'version=v1', 'zone!=us-east'], 'Allow'),
      rule(['env!=dev', 'version!=v1', 'zone=us-east'], 'Deny'),
      rule(['env!=dev', 'version=v1', 'zone!=us-east'], 'Allow'),
      rule(['env=dev', 'version!=v1', 'zone!=us-east'], 'Allow'),
    ]);
  });

  it('03: services never intersect: one rule each, the last entry first', () => {
    const policies = [mtp('mtp-1', [[meshService('backend'), 'Allow'], [meshService('web'), 'Deny'], [meshService('api'), 'AllowWithShadowDeny'], [meshService('orders'), 'Deny']])];
    const rule = (service: string, action: string) => ({ subset: [`${SERVICE}=${service}`], conf: { action }, origins: ['mtp-1'] });
    expect(inboundRules({ MeshTrafficPermission: policies })).toEqual([rule('orders', 'Deny'), rule('api', 'AllowWithShadowDeny'), rule('web', 'Deny'), rule('backend', 'Allow')]);
  });

  const accessLog = (defaults: object[]) =>
    targetRefPolicy('MeshAccessLog', 'mal-1', { targetRef: MESH, from: defaults.map((conf) => ({ targetRef: MESH, default: conf })) });
  const files = { backends: [{ type: 'File', file: { path: '/tmp/log/1' } }, { type: 'File', file: { path: '/tmp/log/2' } }] };

  it('04: an empty list of a later entry replaces the earlier list', () => {
    expect(inboundRules({ MeshAccessLog: [accessLog([files, { backends: [] }])] })).toEqual([{ subset: [], conf: { backends: [] }, origins: ['mal-1'] }]);
  });

  it('05: a later list replaces the earlier one, whatever its items', () => {
    const tcp = { backends: [{ type: 'Tcp', tcp: { address: 'logging:8080' } }] };
    expect(inboundRules({ MeshAccessLog: [accessLog([files, tcp])] })).toEqual([{ subset: [], conf: tcp, origins: ['mal-1'] }]);
  });

  it('several policies: each rule names every policy that contributed, by name', () => {
    const policies = [
      mtp('mtp-1', [[MESH, 'Allow']]),
      mtp('mtp-2', [[meshSubset({ zone: 'us-east' }), 'Deny'], [meshSubset({ env: 'dev' }), 'Allow'], [meshSubset({ env: 'prod' }), 'Allow']]),
    ];
    const both = ['mtp-1', 'mtp-2'];
    expect(inboundRules({ MeshTrafficPermission: policies })).toEqual([
      { subset: ['env=prod', 'zone=us-east'], conf: { action: 'Allow' }, origins: both },
      { subset: ['env=dev', 'zone=us-east'], conf: { action: 'Allow' }, origins: both },
      { subset: ['env!=dev', 'env!=prod', 'zone=us-east'], conf: { action: 'Deny' }, origins: both },
      { subset: ['env=prod', 'zone!=us-east'], conf: { action: 'Allow' }, origins: both },
      { subset: ['env=dev', 'zone!=us-east'], conf: { action: 'Allow' }, origins: both },
      { subset: ['env!=dev', 'env!=prod', 'zone!=us-east'], conf: { action: 'Allow' }, origins: ['mtp-1'] },
    ]);
  });

  it('a service and a subset of another service stay apart', () => {
    const policies = [mtp('mtp-1', [[meshService('backend'), 'Allow'], [{ kind: 'MeshServiceSubset', name: 'web', tags: { version: 'v1' } }, 'Deny']])];
    expect(inboundRules({ MeshTrafficPermission: policies })).toEqual([
      { subset: [`${SERVICE}=web`, 'version=v1'], conf: { action: 'Deny' }, origins: ['mtp-1'] },
      { subset: [`${SERVICE}=backend`], conf: { action: 'Allow' }, origins: ['mtp-1'] },
    ]);
  });
});

describe('rules of `to` entries and proxy-wide rules', () => {
  it('a Mesh entry and a service entry: the service gets both merged, every other destination the first', () => {
    const retry = targetRefPolicy('MeshRetry', 'retry-1', {
      targetRef: MESH,
      to: [
        { targetRef: MESH, default: { tcp: { maxConnectAttempt: 5 }, http: { perTryTimeout: '20s' } } },
        { targetRef: meshService('backend'), default: { tcp: { maxConnectAttempt: 5 }, http: { numRetries: 10 } } },
      ],
    });
    const proxy = targetRefProxyOf(dataplane('dp-1', { address: '127.0.0.1', inbound: [{ port: 80, tags: { [SERVICE]: 'web' } }] }), snapshotOf({}));
    const rules = targetRefRulesOf(matchTargetRefPolicies(proxy, targetRefSnapshotOf({ MeshRetry: [retry] })), 'MeshRetry');
    expect(rules?.to.map(view)).toEqual([
      { subset: [`${SERVICE}=backend`], conf: { tcp: { maxConnectAttempt: 5 }, http: { perTryTimeout: '20s', numRetries: 10 } }, origins: ['retry-1'] },
      { subset: [`${SERVICE}!=backend`], conf: { tcp: { maxConnectAttempt: 5 }, http: { perTryTimeout: '20s' } }, origins: ['retry-1'] },
    ]);
    expect(rules?.from).toEqual([]);
    expect(rules?.singleItem).toEqual([]);
  });

  const zipkin = { type: 'Zipkin', zipkin: { url: 'http://jaeger-collector.mesh-observability:9411/api/v2/spans' } };
  const trace = (name: string, targetRef: object, conf: object) => targetRefPolicy('MeshTrace', name, { targetRef, default: conf });
  const backendProxy = () => targetRefProxyOf(dataplane('dp-1', { address: '127.0.0.1', inbound: [{ port: 80, tags: { [SERVICE]: 'backend' } }] }), snapshotOf({}));

  it('06: one MeshTrace is the proxy-wide rule', () => {
    const conf = { tags: [{ name: 'team', literal: 'core' }], backends: [zipkin] };
    const rules = targetRefRulesOf(matchTargetRefPolicies(backendProxy(), targetRefSnapshotOf({ MeshTrace: [trace('mt-1', MESH, conf)] })), 'MeshTrace');
    expect(rules?.singleItem.map(view)).toEqual([{ subset: [], conf, origins: ['mt-1'] }]);
  });

  it('07: a more specific MeshTrace overrides the lists of a less specific one', () => {
    const datadog = { tags: [{ name: 'team', literal: 'support' }], backends: [{ type: 'Datadog', datadog: { url: 'http://ingest.datadoghq.eu:8126' } }] };
    const policies = [trace('mt-2', meshService('backend'), datadog), trace('mt-1', MESH, { tags: [{ name: 'team', literal: 'core' }], backends: [zipkin] })];
    const rules = targetRefRulesOf(matchTargetRefPolicies(backendProxy(), targetRefSnapshotOf({ MeshTrace: policies })), 'MeshTrace');
    expect(rules?.policies.map((policy) => policy.name)).toEqual(['mt-1', 'mt-2']);
    expect(rules?.singleItem.map(view)).toEqual([{ subset: [], conf: datadog, origins: ['mt-1', 'mt-2'] }]);
  });
});

describe('the rule for a subset', () => {
  const rule = (tags: string[], action: string) => ({ subset: subset(...tags), conf: { action }, origins: [] });
  const actionOf = (rules: ReturnType<typeof rule>[], tags: string[]) => computeRule(rules, subset(...tags))?.conf?.action;

  it.each([
    ['a rule whose tags the subset has', [rule(['key1=val1'], 'Allow')], ['key1=val1', 'key2=val2'], 'Allow'],
    ['a negation holding another value', [rule(['key1!=val1'], 'Allow')], ['key1=val2'], 'Allow'],
    ['a negation holding the same negation', [rule(['key1!=val1'], 'Allow')], ['key1!=val1'], 'Allow'],
    ['the empty rule holding anything', [rule([], 'Allow')], ['key1=val1', 'key2=val2'], 'Allow'],
    ['no rule: a negation of a key the subset lacks', [rule(['key1!=val1'], 'Allow')], ['key2=val2'], undefined],
    ['no rule: a key the subset lacks', [rule(['key1=val1'], 'Allow')], ['key2=val2'], undefined],
    ['no rule: another value', [rule(['key1=val1'], 'Allow')], ['key1=val2'], undefined],
    ['no rule: the negated value', [rule(['key1!=val1'], 'Allow')], ['key1=val1'], undefined],
    ['no rule: a negated subset', [rule(['key1=val1'], 'Allow')], ['key1!=val1'], undefined],
    ['the first rule holding it', [rule(['key1=val1'], 'Allow'), rule(['key2=val2'], 'Deny'), rule([], 'AllowWithShadowDeny')], ['key2=val2', 'key3=val3'], 'Deny'],
  ])('%s', (_, rules, tags, expected) => {
    expect(actionOf(rules, tags)).toBe(expected);
  });
});
