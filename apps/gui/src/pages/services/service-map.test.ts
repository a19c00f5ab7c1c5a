import { describe, expect, it } from 'vitest';
import { drawServiceMap, NODE_RADIUS, shortLabel } from './service-map.js';

const services = [
  { name: 'backend', proxies: 2 },
  { name: 'db', proxies: 1 },
  { name: 'web', proxies: 1 },
];

describe('drawServiceMap', () => {
  it('puts every service on a circle with its proxies online, the first at the top', () => {
    const drawing = drawServiceMap({ services, edges: [] }, new Map([['backend', 1]]));
    expect(drawing.nodes.map(({ name, online, total }) => ({ name, online, total }))).toEqual([
      { name: 'backend', online: 1, total: 2 },
      { name: 'db', online: 0, total: 1 },
      { name: 'web', online: 0, total: 1 },
    ]);
    const [top, ...others] = drawing.nodes;
    expect(top!.x).toBeCloseTo(drawing.width / 2, 0);
    for (const node of others) expect(node.y).toBeGreaterThan(top!.y);
    // Every node, with its label, inside the drawing.
    for (const node of drawing.nodes) {
      expect(node.x - NODE_RADIUS).toBeGreaterThan(0);
      expect(node.y + NODE_RADIUS + 30).toBeLessThan(drawing.height);
    }
  });

  it('runs an arrow from border to border, two arrows side by side for calls both ways, and drops edges of unknown services', () => {
    const policies = [{ kind: 'TrafficPermission', name: 'allow-all' }];
    const drawing = drawServiceMap(
      {
        services,
        edges: [
          { from: 'web', to: 'backend', policies },
          { from: 'backend', to: 'db', policies: [] },
          { from: 'db', to: 'backend', policies: [] },
          { from: 'web', to: 'gone', policies: [] },
        ],
      },
      new Map(),
    );
    expect(drawing.edges.map((edge) => `${edge.from}->${edge.to}`)).toEqual(['web->backend', 'backend->db', 'db->backend']);
    const [webToBackend, backendToDb, dbToBackend] = drawing.edges;
    expect(webToBackend!.policies).toBe(policies);
    const backend = drawing.nodes[0]!;
    const web = drawing.nodes[2]!;
    // Starts on web's border, ends short of backend's.
    expect(Math.hypot(webToBackend!.x1 - web.x, webToBackend!.y1 - web.y)).toBeCloseTo(NODE_RADIUS, 0);
    expect(Math.hypot(webToBackend!.x2 - backend.x, webToBackend!.y2 - backend.y)).toBeGreaterThan(NODE_RADIUS);
    // A band around the arrow takes the clicks, even for a level one.
    expect(webToBackend!.hitArea.split(' ')).toHaveLength(4);
    // The two arrows between backend and db do not overlap.
    expect(backendToDb!.x1 === dbToBackend!.x2 && backendToDb!.y1 === dbToBackend!.y2).toBe(false);
  });

  it('draws a lone service in the middle', () => {
    const drawing = drawServiceMap({ services: [{ name: 'web', proxies: 1 }], edges: [] }, new Map());
    expect(drawing.nodes[0]).toMatchObject({ x: drawing.width / 2, y: drawing.height / 2 });
  });
});

describe('shortLabel', () => {
  it('keeps short names and cuts long ones with an ellipsis', () => {
    expect(shortLabel('web')).toBe('web');
    expect(shortLabel('a'.repeat(60))).toBe(`${'a'.repeat(21)}…`);
  });
});
