// What the binary's launcher runs (src/main.ts), bundled with its dependencies into
// dist/control-plane.cjs (the repository's tsup.base.ts).
export { runBinary } from '@mesh/control-plane';
