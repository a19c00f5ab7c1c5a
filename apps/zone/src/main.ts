import { launchBinary } from '@mesh/control-plane/launch';

await launchBinary('mesh-zone');
