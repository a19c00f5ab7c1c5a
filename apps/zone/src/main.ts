import { launchBinary } from '@mesh/control-plane/launch';

await launchBinary('mesh-zone', new URL('./control-plane.cjs', import.meta.url));
