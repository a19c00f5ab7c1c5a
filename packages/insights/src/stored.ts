// The parts of stored specs the insights read. Stored JSON leaves out absent fields, so every
// field is optional here; the model's spec types (whose keys may hold undefined) fit these.

export interface Subscription {
  connectTime?: string;
  disconnectTime?: string;
}

export interface StoredDataplane {
  networking?: {
    inbound?: Array<{ tags?: Record<string, string>; health?: { ready?: boolean } }>;
    gateway?: { tags?: Record<string, string>; type?: string };
  };
}

export interface StoredDataplaneInsight {
  subscriptions?: Array<Subscription & { version?: { meshDp?: { version?: string }; envoy?: { version?: string } } }>;
  mTLS?: { issuedBackend?: string; supportedBackends?: string[] };
}

export interface StoredZone {
  enabled?: boolean;
}

export interface StoredZoneInsight {
  /** `url`: the address the zone reported for itself when it connected. */
  subscriptions?: Array<Subscription & { url?: string }>;
}

export interface StoredExternalService {
  networking?: { address?: string };
  tags?: Record<string, string>;
}
