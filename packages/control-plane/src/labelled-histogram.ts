// A Prometheus histogram whose observation costs a few map lookups and an array increment (about
// 35 ns): prom-client's builds and hashes a key of the labels at every observation (about 0.5 µs
// with three), which is more than a read from memory costs and a part of what a kept API answer
// costs (docs/architecture.md, Request path). Registered in prom-client's registry like its own
// metrics, which reads `name`, `help`, `type` and `get()`.
import type { MetricValueWithName } from 'prom-client';

interface Series {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative), the last one above every bound. */
  counts: Float64Array;
  sum: number;
}

/** One map per label, in the order of the label names; the last level holds the series. */
type Level = Map<string | number, Level | Series>;

export class LabelledHistogram<Label extends string> {
  readonly type = 'histogram' as const;
  private readonly root: Level = new Map();
  private readonly all: Series[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly Label[],
    private readonly buckets: readonly number[],
  ) {}

  /**
   * Observes `seconds` under the label values, in the order of the label names; no key is built.
   * A value is found as given: a label passed as a number is always passed as a number.
   */
  observe(values: readonly (string | number)[], seconds: number): void {
    let level = this.root;
    const last = this.labelNames.length - 1;
    for (let at = 0; at < last; at++) {
      const value = values[at]!;
      let next = level.get(value) as Level | undefined;
      if (!next) level.set(value, (next = new Map()));
      level = next;
    }
    let series = level.get(values[last]!) as Series | undefined;
    if (!series) level.set(values[last]!, (series = this.newSeries(values)));
    let bucket = 0;
    while (bucket < this.buckets.length && seconds > this.buckets[bucket]!) bucket++;
    series.counts[bucket]!++;
    series.sum += seconds;
  }

  get(): { name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: MetricValueWithName<string>[] } {
    const values: MetricValueWithName<string>[] = [];
    for (const { labels, counts, sum } of this.all) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le: bound, ...labels }, value: cumulative });
      });
      cumulative += counts[this.buckets.length]!;
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...labels }, value: cumulative });
      values.push({ metricName: `${this.name}_sum`, labels, value: sum });
      values.push({ metricName: `${this.name}_count`, labels, value: cumulative });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
  }

  reset(): void {
    this.root.clear();
    this.all.length = 0;
  }

  private newSeries(values: readonly (string | number)[]): Series {
    const labels: Record<string, string> = {};
    this.labelNames.forEach((name, at) => (labels[name] = String(values[at])));
    const series = { labels, counts: new Float64Array(this.buckets.length + 1), sum: 0 };
    this.all.push(series);
    return series;
  }
}
