// Reading protobuf messages by hand in the xDS benchmarks' own processes (the simulated proxies,
// the bare baseline server): only the length-delimited fields they act on, nothing decoded beyond.

/** Calls `onField(number, bytes)` for each length-delimited field of a message, in order; skips the others. */
export function forEachLengthDelimited(buffer, onField) {
  let at = 0;
  const readVarint = () => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const byte = buffer[at++];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
      shift += 7;
    }
  };
  while (at < buffer.length) {
    const key = readVarint();
    const wire = key & 7;
    if (wire === 2) {
      const length = readVarint();
      onField(key >>> 3, buffer.subarray(at, at + length));
      at += length;
    } else if (wire === 0) readVarint();
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
  }
}
