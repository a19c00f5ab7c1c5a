import { describe, expect, it } from 'vitest';
import type { Schemas } from '../../api/client.js';
import { meshGatewayRoutesByPort } from './gateway-routes.js';

const host = (hostName: string, routes: string[]) => ({ hostName, routes: routes.map((route) => ({ route, destinations: [] })) });

const served: Schemas['MatchedPolicies'] = {
  kind: 'MeshGatewayDataplane',
  gateway: { mesh: 'default', name: 'edge' },
  listeners: [
    { port: 8080, protocol: 'HTTP', hosts: [host('*', ['web', 'api']), host('shop.example.com', ['web', 'shop'])] },
    { port: 9090, protocol: 'TCP', hosts: [] },
  ],
};

describe('meshGatewayRoutesByPort', () => {
  it('gives each listener port the routes of its hosts, each once, by name', () => {
    expect(meshGatewayRoutesByPort(served, 'edge')).toEqual(
      new Map([
        [8080, ['api', 'shop', 'web']],
        [9090, []],
      ]),
    );
  });

  it('gives nothing for a proxy of another gateway, a sidecar or no proxy', () => {
    expect(meshGatewayRoutesByPort(served, 'other').size).toBe(0);
    expect(meshGatewayRoutesByPort({ kind: 'SidecarDataplane', total: 0, items: [] }, 'edge').size).toBe(0);
    expect(meshGatewayRoutesByPort(undefined, 'edge').size).toBe(0);
  });
});
