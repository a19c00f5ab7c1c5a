// A control plane process of a topology: the command line of the mesh-global or mesh-zone binary
// (the first argument says which), configured by MESH_* variables as they are.
import { runBinary, type Binary } from '@mesh/control-plane';

const BINARIES: readonly Binary[] = ['mesh-global', 'mesh-zone'];
const binary = process.argv[2] as Binary;
if (!BINARIES.includes(binary)) throw new Error(`expected ${BINARIES.join(' or ')} as the first argument, got ${binary}`);
await runBinary(binary, process.argv.slice(0, 2));
