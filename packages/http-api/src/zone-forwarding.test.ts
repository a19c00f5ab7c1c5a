// What a zone serves its global over the sync session: the inspection views of its proxies alone.
import { describe, expect, it } from 'vitest';
import { isForwardedPath } from './zone-forwarding.js';

describe('isForwardedPath', () => {
  it('takes the inspection views of dataplanes, zone ingresses and zone egresses, with their queries', () => {
    for (const path of [
      '/meshes/default/dataplanes/web-1/xds?include=eds',
      '/meshes/default/dataplanes/web-1/stats',
      '/meshes/default/dataplanes/web-1/clusters',
      '/meshes/default/dataplanes/web-1/policies',
      '/meshes/default/dataplanes/web-1/rules',
      '/zoneingresses/ingress-1/xds',
      '/zoneegresses/egress-1/stats?filter=cluster',
    ]) {
      expect(isForwardedPath(path), path).toBe(true);
    }
  });

  it('refuses everything else of the API', () => {
    for (const path of ['/global-secrets/admin-user-token', '/meshes/default/secrets', '/meshes/default/dataplanes/web-1', '/meshes/default/dataplanes/web-1/xds/extra', '/config', '/meshes/default/dataplanes/a/b/xds']) {
      expect(isForwardedPath(path), path).toBe(false);
    }
  });
});
