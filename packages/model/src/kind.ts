// The descriptor of a resource kind: everything routing, validation, the catalogue, the store
// and zone sync need to know about it, declared once in the kind's own file.
import type { z } from 'zod';
import type { Violation } from './validation/violations.js';

/** How a control plane runs: alone, as the global of several zones, or as one zone. */
export type Mode = 'standalone' | 'global' | 'zone';

export const MODES: readonly Mode[] = ['standalone', 'global', 'zone'];

/** A list of the spec that may hold only so many items (docs/api.md, Limits). */
export interface ListLimit {
  /** Its place in the spec, dotted (`networking.inbound`), as violations name it. */
  readonly field: string;
  readonly max: number;
  /** What its items are, in the plural (`inbounds`), for the message. */
  readonly items: string;
}

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
  /** The command-line client's names of the kind (`meshctl get traffic-routes`, `get traffic-route NAME`); absent for runtime state. */
  readonly cliNames?: { readonly singular: string; readonly plural: string };
  /** Policies select proxies by sources/destinations or by selectors. */
  readonly selection?: 'sourcesDestinations' | 'selectors';
  /**
   * A targetRef policy (docs/policies.md): its top-level `targetRef` selects proxies, `from`
   * entries configure their inbound traffic and `to` entries their outbound traffic.
   */
  readonly targetRefPolicy?: { readonly from: boolean; readonly to: boolean };
  /**
   * The body key the spec travels under (`spec`, the targetRef policies), checked against the
   * schema first with every mismatch a violation at `spec.<path>`; absent, the spec's fields sit
   * beside the meta and a field of the wrong type fails decoding (docs/api.md, Resources).
   */
  readonly specField?: 'spec';
  /**
   * Which proxies a policy can affect, so a change re-matches only those: `selected` (the proxies
   * its selectors select), `everyProxy`, `destinationsAndSenders` (an inbound policy: the
   * proxies of its destinations, and its sources sending to its destinations),
   * `sourcesToDestinations` (an outbound policy: its sources' proxies reaching its destinations).
   * Derived from `selection` unless a kind says otherwise.
   */
  readonly reach?: 'selected' | 'everyProxy' | 'destinationsAndSenders' | 'sourcesToDestinations';
  /**
   * Which proxy configurations a change of a resource of this kind can alter: the incremental
   * engine (packages/proxy-config) drops exactly those results, and follows no kind that affects
   * `nothing` (docs/architecture.md, Which proxies a change affects).
   */
  readonly affects: ProxyImpact;
  /** Listed by `GET /policies`. */
  readonly inCatalogue: boolean;
  /** A policy whose proxies `/{path}/{name}/dataplanes` lists (gateways and virtual outbounds have their own views). */
  readonly inspectable: boolean;
  /**
   * How the kind flows between global and zones (`KDS_FLAGS`); 0 for a kind that never syncs.
   * Which modes' REST API may write it follows from these flags too (`isWritableViaApi`).
   */
  readonly kdsFlags: number;
  /** Runtime state the control plane writes itself (insights); the REST API never does. */
  readonly readOnly: boolean;
  /** Computed from other resources on request and never stored (mesh and service insights): no CRUD routes. */
  readonly computed: boolean;
  /** Only admins may read or write it (secrets). */
  readonly adminOnly: boolean;
  /** Zone names must be one DNS label (synced names are `<zone>.<name>`). */
  readonly nameIsDnsLabel: boolean;
  /** Decodes the spec fields of a body into their normalised wire form. */
  readonly schema: z.ZodType<Spec>;
  /**
   * Lists that may hold only so many items, counted on the body before it is decoded (`decodeSpec`,
   * for kinds whose spec sits beside the meta), so that refusing an oversized one costs no more
   * than counting it.
   */
  readonly listLimits?: readonly ListLimit[];
  /** The reference's validation rules; all violations, in check order. */
  readonly validate: (spec: Spec) => Violation[];
  /** The tag sets a `tag=key:value` list filter looks at (dataplane inbounds and gateway, service tags). */
  readonly tagSets?: (spec: Spec) => Array<Record<string, string>>;
  /** The gateway type a `gateway=` list filter looks at; undefined for a proxy without a gateway. */
  readonly gatewayType?: (spec: Spec) => 'builtin' | 'delegated' | undefined;
  /** Defaults the reference fills in before storing (visible on GET). */
  readonly applyDefaults?: (spec: Spec) => Spec;
  /** The resource the OpenAPI document shows for the kind's requests (docs/api.md, OpenAPI); absent for computed kinds. */
  readonly example?: KindExample;
  /** The command-line client's table columns of the kind, between NAME and AGE (`meshctl get`). */
  readonly cliColumns?: readonly CliColumn<Spec>[];
}

/**
 * A documented resource of a kind. The examples of all kinds form one small mesh (examples.ts),
 * so each request they document succeeds once the examples before it have been sent.
 */
export interface KindExample {
  /** The mesh of a mesh-scoped kind. */
  readonly mesh?: string;
  readonly name: string;
  /** The kind's fields (`{spec}` for a targetRef policy), as a `PUT` body carries them beside `type`, `mesh` and `name`. */
  readonly spec: Record<string, unknown>;
}

/** A column of the command-line client's tables: its header and its cell, from the resource's spec. */
export interface CliColumn<Spec> {
  readonly header: string;
  readonly value: (spec: Spec) => string;
}

/**
 * What a change of a resource can alter in proxy configuration. Zone proxies read every mesh, so
 * a change of any kind but `nothing` alters them too.
 */
export const PROXY_IMPACTS = [
  /** No proxy configuration reads it (runtime state, zones, global secrets). */
  'nothing',
  /** Every proxy of its mesh (the Mesh itself; external services, which any permission may open to any proxy). */
  'meshProxies',
  /** The proxies it selects by tags before or after the change: by its `reach`, or by its top-level targetRef. */
  'selectedProxies',
  /** The proxy it describes, and the proxies reaching a service whose endpoints it moves. */
  'proxyAndConsumers',
  /** The proxies whose configuration embeds it through a resource naming it (TLS files of external services, gateway certificates). */
  'referringProxies',
  /** The zone proxies, and the proxies of the meshes whose cross-zone traffic goes through them. */
  'zoneProxies',
] as const;

export type ProxyImpact = (typeof PROXY_IMPACTS)[number];

export type KindOptions<Spec> = Pick<KindDescriptor<Spec>, 'name' | 'path' | 'scope' | 'displayName' | 'singularDisplayName' | 'schema' | 'validate' | 'affects'> &
  Partial<Omit<KindDescriptor<Spec>, 'name' | 'path' | 'scope' | 'displayName' | 'singularDisplayName' | 'schema' | 'validate' | 'affects'>>;

/**
 * Sync flags as the reference spells them: who provides a kind (its source of truth, where the
 * REST API may write it) and who consumes it (where zone sync writes copies). See docs/multizone.md.
 */
export const KDS_FLAGS = {
  consumedByZone: 1,
  consumedByGlobal: 1 << 2,
  providedByZone: 1 << 3,
  providedByGlobal: 1 << 4,
  fromZoneToGlobal: (1 << 2) | (1 << 3),
  fromGlobalToZone: (1 << 4) | 1,
} as const;

const hasFlag = (kind: { kdsFlags: number }, flag: number): boolean => (kind.kdsFlags & flag) !== 0;

/**
 * Whether the REST API of a control plane in `mode` accepts writes of this kind: never for
 * runtime state or a read-only API; on a global only what the global provides, on a zone only
 * what zones provide; a kind that never syncs is writable in every mode.
 */
export function isWritableViaApi(kind: Pick<KindDescriptor, 'kdsFlags' | 'readOnly'>, mode: Mode, apiReadOnly = false): boolean {
  if (apiReadOnly || kind.readOnly) return false;
  if (kind.kdsFlags === 0 || mode === 'standalone') return true;
  return hasFlag(kind, mode === 'global' ? KDS_FLAGS.providedByGlobal : KDS_FLAGS.providedByZone);
}

/** The global sends it to zones. */
export const syncsGlobalToZone = (kind: Pick<KindDescriptor, 'kdsFlags'>): boolean =>
  hasFlag(kind, KDS_FLAGS.providedByGlobal) && hasFlag(kind, KDS_FLAGS.consumedByZone);

/** Zones send it to the global. */
export const syncsZoneToGlobal = (kind: Pick<KindDescriptor, 'kdsFlags'>): boolean =>
  hasFlag(kind, KDS_FLAGS.providedByZone) && hasFlag(kind, KDS_FLAGS.consumedByGlobal);

type Selection = NonNullable<KindDescriptor['selection']>;
type TargetRefSections = NonNullable<KindDescriptor['targetRefPolicy']>;
type DefinedKind<Spec, Name extends string, S, T> = KindDescriptor<Spec> & { readonly name: Name } & (S extends Selection ? { readonly selection: S } : unknown) &
  (T extends TargetRefSections ? { readonly targetRefPolicy: T } : unknown);

/**
 * Declares a kind; defaults fit a policy written on the global and synced to zones. The
 * descriptor's type keeps whether the kind selects proxies (`selection`, `targetRefPolicy`), so
 * the registry derives its policy lists and their spec types from the one list of kinds.
 */
export function defineKind<Spec, const Name extends string, const S extends Selection | undefined = undefined, const T extends TargetRefSections | undefined = undefined>(
  options: KindOptions<Spec> & { name: Name; selection?: S; targetRefPolicy?: T },
): DefinedKind<Spec, Name, S, T> {
  const descriptor: KindDescriptor<Spec> & { readonly name: Name } = {
    wireType: options.name,
    acceptedTypes: [options.wireType ?? options.name],
    inCatalogue: options.selection !== undefined || options.targetRefPolicy !== undefined,
    inspectable: options.selection !== undefined || options.targetRefPolicy !== undefined,
    ...(options.selection ? { reach: options.selection === 'selectors' ? ('selected' as const) : ('sourcesToDestinations' as const) } : {}),
    kdsFlags: KDS_FLAGS.fromGlobalToZone,
    readOnly: false,
    computed: false,
    adminOnly: false,
    nameIsDnsLabel: false,
    ...options,
  };
  return descriptor as DefinedKind<Spec, Name, S, T>;
}

/** A kind with its spec type erased, as registries and routers hold it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a kind takes its spec in (validate) and gives it out, so only `any` accepts every kind
export type AnyKind = KindDescriptor<any>;
