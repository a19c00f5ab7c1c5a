// The descriptor of a resource kind: everything routing, validation, the catalogue, the store
// and zone sync need to know about it, declared once in the kind's own file.
import type { z } from 'zod';
import type { Violation } from './validation/violations.js';

/** How a control plane runs: alone, as the global of several zones, or as one zone. */
export type Mode = 'standalone' | 'global' | 'zone';

export const MODES: readonly Mode[] = ['standalone', 'global', 'zone'];

export interface KindDescriptor<Spec = Record<string, unknown>> {
  /** Kind name, the store's type key (`TrafficRoute`). */
  readonly name: string;
  /** The `type` responses carry (`Secret` for global secrets). */
  readonly wireType: string;
  /** The `type` values a PUT body may carry. */
  readonly acceptedTypes: readonly string[];
  /** Collection path segment (`traffic-routes`). */
  readonly path: string;
  /** Mesh-scoped kinds live under `/meshes/{mesh}/<path>`; global ones at `/<path>`. */
  readonly scope: 'mesh' | 'global';
  readonly displayName: string;
  readonly singularDisplayName: string;
  /** Policies select proxies by sources/destinations or by selectors. */
  readonly selection?: 'sourcesDestinations' | 'selectors';
  /** Listed by `GET /policies`. */
  readonly inCatalogue: boolean;
  /** A policy whose proxies `/{path}/{name}/dataplanes` lists (gateways and virtual outbounds have their own views). */
  readonly inspectable: boolean;
  /** Modes whose REST API accepts PUT/DELETE of this kind. */
  readonly writableOn: readonly Mode[];
  /** Direction of zone sync. */
  readonly sync: 'globalToZones' | 'zoneToGlobal' | 'none';
  /** Only admins may read or write it (secrets). */
  readonly adminOnly: boolean;
  /** Zone names must be one DNS label (synced names are `<zone>.<name>`). */
  readonly nameIsDnsLabel: boolean;
  /** Decodes the spec fields of a body into their normalised wire form. */
  readonly schema: z.ZodType<Spec>;
  /** The reference's validation rules; all violations, in check order. */
  readonly validate: (spec: Spec) => Violation[];
  /** The tag sets a `tag=key:value` list filter looks at (dataplane inbounds and gateway, service tags). */
  readonly tagSets?: (spec: Spec) => Array<Record<string, string>>;
  /** The gateway type a `gateway=` list filter looks at; undefined for a proxy without a gateway. */
  readonly gatewayType?: (spec: Spec) => 'builtin' | 'delegated' | undefined;
  /** Defaults the reference fills in before storing (visible on GET). */
  readonly applyDefaults?: (spec: Spec) => Spec;
}

export type KindOptions<Spec> = Pick<KindDescriptor<Spec>, 'name' | 'path' | 'scope' | 'displayName' | 'singularDisplayName' | 'schema' | 'validate'> &
  Partial<Omit<KindDescriptor<Spec>, 'name' | 'path' | 'scope' | 'displayName' | 'singularDisplayName' | 'schema' | 'validate'>>;

const GLOBAL_OWNED: readonly Mode[] = ['standalone', 'global'];

/** Declares a kind; defaults fit a policy written on the global and synced to zones. */
export function defineKind<Spec>(options: KindOptions<Spec>): KindDescriptor<Spec> {
  return {
    wireType: options.name,
    acceptedTypes: [options.wireType ?? options.name],
    inCatalogue: options.selection !== undefined,
    inspectable: options.selection !== undefined,
    writableOn: GLOBAL_OWNED,
    sync: 'globalToZones',
    adminOnly: false,
    nameIsDnsLabel: false,
    ...options,
  };
}

/** A kind with its spec type erased, as registries and routers hold it. */
export type AnyKind = KindDescriptor<any>;
