// The proxy configuration of every mesh, kept up to date incrementally from the store: matched
// policies and rendered Envoy resources per dataplane. See README.md.
export { MeshProxies, type ProxyMatch, type WorkCounters } from './mesh-proxies.js';
export { ProxyConfigService, type ProxyConfigServiceOptions, type ProxyKey, type ProxyListener } from './service.js';
export { storedPolicyOf } from './resources.js';
export { VipAllocator, type VipAllocatorOptions, type VipLog } from './vip-allocator.js';
export { allocateVips, type MeshVips, meshVipsOf, parseIpv4Cidr, type VipHost, vipHostsOf, type VipSettings, vipSettingKey } from './vips.js';
