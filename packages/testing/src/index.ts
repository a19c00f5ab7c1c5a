export { freeBasePort, freePort, freePorts, portsAt, type ControlPlanePorts } from './process.js';
export {
  startTopology,
  GlobalControlPlane,
  TopologyControlPlane,
  ZoneControlPlane,
  type Topology,
  type TopologyOptions,
  type TopologyStore,
  type ZoneIngressProcess,
} from './topology.js';
