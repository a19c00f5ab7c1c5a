import { runBinary } from '@mesh/control-plane';

await runBinary('mesh-zone');
