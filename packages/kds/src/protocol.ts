// The messages of zone sync (docs/multizone.md, The protocol). Both sides validate what they
// receive with these schemas; JSON text carries them over one WebSocket per zone.
import { z } from 'zod';

/** Where a sender's store stands: which store (its cluster id) and the revision sent through. */
export const CursorSchema = z.object({ store: z.string().min(1), revision: z.number().int().nonnegative() });
export type Cursor = z.infer<typeof CursorSchema>;

export const SyncedCopySchema = z.object({
  mesh: z.string(),
  name: z.string().min(1),
  /** The stored spec, JSON text. */
  spec: z.string(),
  labels: z.record(z.string(), z.string()).optional(),
  creationTime: z.string().optional(),
});

/** One kind in a batch: a response of the reference's protocol, acknowledged by its nonce. */
export const SyncedKindSchema = z.object({
  type: z.string().min(1),
  nonce: z.string().min(1),
  resources: z.array(SyncedCopySchema),
  removed: z.array(z.object({ mesh: z.string(), name: z.string().min(1) })),
});
export type SyncedKind = z.infer<typeof SyncedKindSchema>;

/**
 * What a sender sends: changes of one or more kinds, applied by the receiver in one transaction.
 * `full` replaces everything the receiver holds from the sender of those kinds. `cursor`, when
 * present, is where the receiver stands once it applied the batch: a full sync of several kinds
 * carries it on its last batch only, so a receiver cut off halfway starts over.
 */
export const SyncMessageSchema = z.object({
  full: z.boolean(),
  kinds: z.array(SyncedKindSchema),
  cursor: CursorSchema.optional(),
});
export type SyncMessage = z.infer<typeof SyncMessageSchema>;

export const VersionSchema = z.object({
  version: z.string(),
  gitTag: z.string(),
  gitCommit: z.string(),
  buildDate: z.string(),
});
export type Version = z.infer<typeof VersionSchema>;

/** What a zone says of itself when it opens its session (the reference's node metadata). */
export const HelloSchema = z.object({
  version: VersionSchema,
  /** JSON text of the zone's configuration, secrets masked. */
  config: z.string(),
  /** The address the zone's API can be reached at. */
  url: z.string(),
  /** `zone-token`: send the zone-token signing keys (as public keys). */
  features: z.array(z.string()),
  /** Where the zone stands with what the global sent; null to receive everything. */
  cursor: CursorSchema.nullable(),
});
export type Hello = z.infer<typeof HelloSchema>;

/** Identity of the connection, sent before anything else (the reference's `client-id` metadata). */
export const ConnectionParamsSchema = z.object({ zone: z.string().min(1), token: z.string().max(64 * 1024).optional() });

/** A request of the global's API that the owning zone answers: a path of its API, as the global got it. */
export interface AdminRequest {
  requestId: string;
  /** Path and query, with the zone's own names. */
  path: string;
}

export const AdminReplySchema = z.object({
  requestId: z.string(),
  status: z.number().int(),
  contentType: z.string(),
  body: z.string(),
});
export type AdminReply = z.infer<typeof AdminReplySchema>;

/** What the global sends a zone on its session. */
export type SessionEvent =
  | { kind: 'welcome'; globalInstanceId: string; clusterId: string; zoneCursor: Cursor | null }
  | { kind: 'sync'; message: SyncMessage }
  | { kind: 'admin'; request: AdminRequest };

export const AckSchema = z.object({ nonces: z.array(z.string()), error: z.string().optional() });

/** The feature a zone announces to receive the zone-token keys. */
export const ZONE_TOKEN_FEATURE = 'zone-token';
