import { launchBinary } from '@mesh/control-plane/launch';

await launchBinary('mesh-global', new URL('./control-plane.cjs', import.meta.url));
