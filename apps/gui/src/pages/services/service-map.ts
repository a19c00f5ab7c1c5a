// The service map's drawing (docs/gui.md, Service map): the services on a circle, in name order,
// each with its proxies online, and the calls between them as arrows from border to border. Two
// services calling each other get two arrows, side by side, so that each can be clicked.

export interface ServiceMapInput {
  services: readonly { name: string; proxies: number }[];
  edges: readonly { from: string; to: string; policies: readonly { kind: string; name: string }[] }[];
}

export interface MapNode {
  name: string;
  x: number;
  y: number;
  online: number;
  total: number;
}

export interface MapEdge {
  from: string;
  to: string;
  policies: readonly { kind: string; name: string }[];
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  /** The area that takes clicks: a band around the arrow (a line has no area of its own). */
  hitArea: string;
}

export interface MapDrawing {
  width: number;
  height: number;
  nodes: MapNode[];
  edges: MapEdge[];
}

export const NODE_RADIUS = 30;
/** Room around the circle for the labels under the nodes. */
const MARGIN = 90;
/** How far apart the two arrows between two services are drawn. */
const PAIR_OFFSET = 7;
/** Half the width of the band around an arrow that takes clicks. */
const HIT_HALF_WIDTH = 6;

/** Where each service sits and where each arrow runs; `online` has the services' proxies online (from their insights). */
export function drawServiceMap(map: ServiceMapInput, online: ReadonlyMap<string, number>): MapDrawing {
  const count = map.services.length;
  // Enough circumference for every node and its label.
  const radius = count <= 1 ? 0 : Math.max(120, (count * (NODE_RADIUS * 2 + 50)) / (2 * Math.PI));
  const size = 2 * (radius + MARGIN);
  const nodes = map.services.map((service, index): MapNode => {
    // The first at the top, then clockwise.
    const angle = -Math.PI / 2 + (2 * Math.PI * index) / Math.max(count, 1);
    return { name: service.name, x: round(size / 2 + radius * Math.cos(angle)), y: round(size / 2 + radius * Math.sin(angle)), online: online.get(service.name) ?? 0, total: service.proxies };
  });
  const at = new Map(nodes.map((node) => [node.name, node]));
  const pairs = new Set(map.edges.map((edge) => `${edge.from}\u0000${edge.to}`));
  const edges = map.edges.flatMap((edge): MapEdge[] => {
    const from = at.get(edge.from);
    const to = at.get(edge.to);
    if (!from || !to) return [];
    const dx = to.x - from.x;
    const dy = to.y - from.y;
    const length = Math.hypot(dx, dy) || 1;
    const [ux, uy] = [dx / length, dy / length];
    // To the right of the direction of travel when the call goes both ways.
    const offset = pairs.has(`${edge.to}\u0000${edge.from}`) ? PAIR_OFFSET : 0;
    const [ox, oy] = [-uy * offset, ux * offset];
    const [x1, y1] = [round(from.x + ux * NODE_RADIUS + ox), round(from.y + uy * NODE_RADIUS + oy)];
    const [x2, y2] = [round(to.x - ux * (NODE_RADIUS + 4) + ox), round(to.y - uy * (NODE_RADIUS + 4) + oy)];
    const [hx, hy] = [-uy * HIT_HALF_WIDTH, ux * HIT_HALF_WIDTH];
    const corners = [
      [x1 + hx, y1 + hy],
      [x2 + hx, y2 + hy],
      [x2 - hx, y2 - hy],
      [x1 - hx, y1 - hy],
    ];
    return [{ from: edge.from, to: edge.to, policies: edge.policies, x1, y1, x2, y2, hitArea: corners.map(([x, y]) => `${round(x!)},${round(y!)}`).join(' ') }];
  });
  return { width: Math.max(size, 2 * MARGIN), height: Math.max(size, 2 * MARGIN), nodes, edges };
}

const round = (value: number): number => Math.round(value * 10) / 10;

/** A name cut to fit under a node; the whole name is its title. */
export const shortLabel = (name: string, max = 22): string => (name.length <= max ? name : `${name.slice(0, max - 1)}…`);
