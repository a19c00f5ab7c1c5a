/**
 * The (mesh, name) keys of one resource type in code-unit order. It answers counts and turns a
 * numeric page offset into a position, so a deep page costs what the first one does.
 */
export class SortedKeys {
  private readonly keys: string[] = [];

  static compose(mesh: string, name: string): string {
    return `${mesh}\u0000${name}`;
  }

  get size(): number {
    return this.keys.length;
  }

  /** Appends a key, out of order until `sort` (bulk loading). */
  push(key: string): void {
    this.keys.push(key);
  }

  /** Puts keys appended by `push` in order; fast when they came in order. */
  sort(): void {
    // The default order compares UTF-16 code units, as `<` does.
    this.keys.sort();
  }

  insert(key: string): void {
    const at = this.lowerBound(key);
    if (this.keys[at] !== key) this.keys.splice(at, 0, key);
  }

  remove(key: string): void {
    const at = this.lowerBound(key);
    if (this.keys[at] === key) this.keys.splice(at, 1);
  }

  /** The position of the first key after `key` (present or not). */
  positionAfter(key: string): number {
    const at = this.lowerBound(key);
    return this.keys[at] === key ? at + 1 : at;
  }

  at(index: number): string | undefined {
    return this.keys[index];
  }

  /** The positions [start, end) of the keys of one mesh, or of all keys. */
  range(mesh?: string): [number, number] {
    if (mesh === undefined) return [0, this.keys.length];
    return [this.lowerBound(`${mesh}\u0000`), this.lowerBound(`${mesh}\u0001`)];
  }

  private lowerBound(key: string): number {
    let low = 0;
    let high = this.keys.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.keys[mid]! < key) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
