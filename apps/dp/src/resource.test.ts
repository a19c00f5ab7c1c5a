import { describe, expect, it } from 'vitest';
import { parseVars, readResource, renderTemplate } from './resource.js';

const TEMPLATE = `type: Dataplane
mesh: default
name: {{ name }}
networking:
  address: {{address}}
  inbound:
    - port: {{ port }}
      tags: { mesh.io/service: web, zone: "{{ missing }}" }
`;

describe('the proxy resource of mesh-dp', () => {
  it('fills the placeholders from --dataplane-var values, a placeholder without one rendering empty', () => {
    const vars = parseVars(['name=web-1', 'address=10.0.0.1,port=8080']);
    expect(vars).toEqual({ name: 'web-1', address: '10.0.0.1', port: '8080' });
    const resource = readResource(renderTemplate(TEMPLATE, vars), 'dataplane');
    expect(resource).toMatchObject({ type: 'Dataplane', mesh: 'default', name: 'web-1' });
    expect(resource.body.networking).toEqual({ address: '10.0.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web', zone: '' } }] });
  });

  it('refuses a resource of another kind than the proxy type, one without a name, and a malformed variable', () => {
    expect(() => readResource('type: ZoneIngress\nname: i-1\n', 'dataplane')).toThrow('invalid proxy resource type "ZoneIngress", expected Dataplane');
    expect(readResource('{"type": "ZoneIngress", "name": "i-1"}', 'ingress')).toMatchObject({ type: 'ZoneIngress', mesh: '', name: 'i-1' });
    expect(() => readResource('type: Dataplane\nmesh: default\n', 'dataplane')).toThrow('name: cannot be empty');
    expect(() => parseVars(['novalue'])).toThrow('--dataplane-var: expected key=value, got "novalue"');
  });
});
