/** One broken rule: the field path in the reference's form and its message. */
export interface Violation {
  field: string;
  message: string;
}

/** Field paths as the reference writes them: `conf.split[0].weight`, `match["mesh.io/service"]`. */
export const fieldPath = (parent: string, name: string): string => (parent === '' ? name : `${parent}.${name}`);
export const indexPath = (parent: string, index: number): string => `${parent}[${index}]`;
export const keyPath = (parent: string, key: string): string => `${parent}[${JSON.stringify(key)}]`;

/** Collects every violation of a resource, in check order, so clients see all causes at once. */
export class Violations {
  readonly list: Violation[] = [];

  add(field: string, message: string): void {
    this.list.push({ field, message });
  }

  addAll(violations: readonly Violation[]): void {
    this.list.push(...violations);
  }

  get empty(): boolean {
    return this.list.length === 0;
  }
}
