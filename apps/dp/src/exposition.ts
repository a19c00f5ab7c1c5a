// Prometheus expositions read, merged and written again, so that Envoy's metrics and the
// application's make one valid answer (README.md, Metrics): one HELP and TYPE per metric family,
// no series twice, in one format. Both text formats are read, the Prometheus one (0.0.4) and
// OpenMetrics, and each is written from what the other holds.

export type ExpositionFormat = 'text' | 'openmetrics-1.0.0' | 'openmetrics-0.0.1';

export const CONTENT_TYPES: Readonly<Record<ExpositionFormat, string>> = {
  text: 'text/plain; version=0.0.4; charset=utf-8',
  'openmetrics-1.0.0': 'application/openmetrics-text; version=1.0.0; charset=utf-8',
  'openmetrics-0.0.1': 'application/openmetrics-text; version=0.0.1; charset=utf-8',
};

/** Preferred first when the sources answered in several formats. */
const FORMAT_PRIORITY: readonly ExpositionFormat[] = ['openmetrics-1.0.0', 'openmetrics-0.0.1', 'text'];

/**
 * The format of an answer by its content type; undefined for one that is neither text format
 * (protobuf), or unknown. `text/plain` is the Prometheus format whatever its version (Envoy
 * sends none); OpenMetrics without a version is 0.0.1.
 */
export function formatOfContentType(contentType: string | undefined): ExpositionFormat | undefined {
  const [mediaType = '', ...parameters] = (contentType ?? '').split(';').map((part) => part.trim());
  const version = parameters.find((parameter) => parameter.toLowerCase().startsWith('version='))?.slice('version='.length).replace(/^"|"$/g, '') ?? '';
  switch (mediaType.toLowerCase()) {
    case 'text/plain':
      return 'text';
    case 'application/openmetrics-text':
      if (version === '' || version === '0.0.1') return 'openmetrics-0.0.1';
      return version === '1.0.0' ? 'openmetrics-1.0.0' : undefined;
    default:
      return undefined;
  }
}

/** The answer's format: the most preferred among the sources', else the Prometheus text format. */
export function selectFormat(formats: Iterable<ExpositionFormat>): ExpositionFormat {
  const present = new Set(formats);
  return FORMAT_PRIORITY.find((format) => present.has(format)) ?? 'text';
}

export interface Sample {
  name: string;
  labels: Array<[string, string]>;
  /** As written: `1`, `2.5e-3`, `+Inf`, `NaN`. */
  value: string;
  /** Milliseconds since the epoch. */
  timestampMs?: number;
}

export interface MetricFamily {
  name: string;
  /** The type in the family's format: `untyped` in Prometheus text, `unknown` in OpenMetrics. */
  type: string;
  help?: string;
  /** OpenMetrics only. */
  unit?: string;
  samples: Sample[];
}

const isOpenMetrics = (format: ExpositionFormat) => format !== 'text';

/** The sample names of a family of each type, as suffixes of the family's name. */
const SUFFIXES: Readonly<Record<'text' | 'openmetrics', Readonly<Record<string, readonly string[]>>>> = {
  text: { counter: [''], gauge: [''], untyped: [''], histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'] },
  openmetrics: {
    counter: ['_total', '_created'],
    gauge: [''],
    unknown: [''],
    stateset: [''],
    info: ['_info'],
    histogram: ['_bucket', '_sum', '_count', '_created'],
    gaugehistogram: ['_bucket', '_gsum', '_gcount'],
    summary: ['', '_sum', '_count', '_created'],
  },
};

const ALL_SUFFIXES = [...new Set(Object.values(SUFFIXES).flatMap((byType) => Object.values(byType).flat()))];

const belongsTo = (family: MetricFamily, sampleName: string, openMetrics: boolean): boolean =>
  (SUFFIXES[openMetrics ? 'openmetrics' : 'text'][family.type] ?? ['']).some((suffix) => family.name + suffix === sampleName);

function unescape(text: string, quotes: boolean): string {
  return text.replace(/\\(.)/g, (whole, next: string) => (next === 'n' ? '\n' : next === '\\' ? '\\' : quotes && next === '"' ? '"' : whole));
}

const escapeLabelValue = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const escapeHelp = (help: string, openMetrics: boolean) => {
  const escaped = help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
  return openMetrics ? escaped.replace(/"/g, '\\"') : escaped;
};

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

/** One sample line; undefined when it is not one. */
function parseSample(line: string, openMetrics: boolean): Sample | undefined {
  const name = NAME.exec(line)?.[0];
  if (!name) return undefined;
  let rest = line.slice(name.length);
  const labels: Array<[string, string]> = [];
  if (rest.startsWith('{')) {
    rest = rest.slice(1).trimStart();
    while (!rest.startsWith('}')) {
      const label = LABEL_NAME.exec(rest)?.[0];
      if (!label) return undefined;
      rest = rest.slice(label.length).trimStart();
      if (!rest.startsWith('="')) return undefined;
      const value = /^="((?:[^"\\]|\\.)*)"/.exec(rest);
      if (!value) return undefined;
      labels.push([label, unescape(value[1] ?? '', true)]);
      rest = rest.slice(value[0].length).trimStart();
      if (rest.startsWith(',')) rest = rest.slice(1).trimStart();
      else if (!rest.startsWith('}')) return undefined;
    }
    rest = rest.slice(1);
  }
  // An exemplar (` # {...} value`) follows the sample in OpenMetrics: it is left out.
  const exemplar = openMetrics ? rest.indexOf(' # ') : -1;
  const fields = (exemplar >= 0 ? rest.slice(0, exemplar) : rest).trim().split(/\s+/);
  const [value, timestamp] = fields;
  if (!value || fields.length > 2 || !/^[+-]?(?:inf|nan|[0-9.]+(?:e[+-]?[0-9]+)?)$/i.test(value)) return undefined;
  const sample: Sample = { name, labels, value };
  if (timestamp !== undefined) {
    const number = Number(timestamp);
    if (!Number.isFinite(number)) return undefined;
    sample.timestampMs = openMetrics ? number * 1000 : number;
  }
  return sample;
}

export interface ParseResult {
  families: MetricFamily[];
  /** Lines that are neither metadata, comments nor samples. */
  skippedLines: number;
}

/** The families of an exposition in `format`, in order; samples go to the family their name belongs to. */
export function parseExposition(text: string, format: ExpositionFormat): ParseResult {
  const openMetrics = isOpenMetrics(format);
  const families = new Map<string, MetricFamily>();
  let current: MetricFamily | undefined;
  let skippedLines = 0;
  const familyNamed = (name: string, type: string): MetricFamily => {
    let family = families.get(name);
    if (!family) {
      family = { name, type, samples: [] };
      families.set(name, family);
    }
    return family;
  };
  for (const rawLine of text.split('\n')) {
    const line = rawLine.replace(/\r$/, '');
    if (line.trim() === '') continue;
    const metadata = /^#\s*(HELP|TYPE|UNIT)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\s(.*))?$/.exec(line);
    if (metadata) {
      const [, keyword, name = '', argument = ''] = metadata;
      current = familyNamed(name, openMetrics ? 'unknown' : 'untyped');
      if (keyword === 'HELP') current.help ??= unescape(argument, openMetrics);
      else if (keyword === 'TYPE') current.type = argument.trim().toLowerCase();
      else if (openMetrics && argument.trim() !== '') current.unit = argument.trim();
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = parseSample(line, openMetrics);
    if (!sample) {
      skippedLines++;
      continue;
    }
    let family = current && belongsTo(current, sample.name, openMetrics) ? current : undefined;
    family ??= ALL_SUFFIXES.map((suffix) => (sample.name.endsWith(suffix) ? families.get(sample.name.slice(0, sample.name.length - suffix.length)) : undefined)).find(
      (candidate) => candidate !== undefined && belongsTo(candidate, sample.name, openMetrics),
    );
    family ??= familyNamed(sample.name, openMetrics ? 'unknown' : 'untyped');
    family.samples.push(sample);
    current = family;
  }
  return { families: [...families.values()], skippedLines };
}

/** Samples whose name has `suffix` as their own family of `type`, named after them. */
function familiesBySampleName(family: MetricFamily, samples: readonly Sample[], type: string): MetricFamily[] {
  const byName = new Map<string, MetricFamily>();
  for (const sample of samples) {
    const target = byName.get(sample.name) ?? { name: sample.name, type, ...(family.help === undefined ? {} : { help: family.help }), samples: [] };
    target.samples.push(sample);
    byName.set(sample.name, target);
  }
  return [...byName.values()];
}

/** An OpenMetrics family as Prometheus text families: `_created` samples become gauges of their own, as clients write them. */
function openMetricsToText(family: MetricFamily): MetricFamily[] {
  const created = family.samples.filter((sample) => sample.name === `${family.name}_created` && family.type !== 'gauge' && family.type !== 'unknown');
  const rest = family.samples.filter((sample) => !created.includes(sample));
  const help = family.help === undefined ? {} : { help: family.help };
  const converted: MetricFamily[] = [];
  switch (family.type) {
    case 'counter':
      converted.push(...familiesBySampleName(family, rest, 'counter'));
      break;
    case 'gauge':
    case 'histogram':
    case 'summary':
      converted.push({ name: family.name, type: family.type, ...help, samples: rest });
      break;
    case 'info':
    case 'stateset':
      converted.push(...familiesBySampleName(family, rest, 'gauge'));
      break;
    default:
      converted.push(...familiesBySampleName(family, rest, 'untyped'));
  }
  converted.push(...familiesBySampleName(family, created, 'gauge'));
  return converted.filter((result) => result.samples.length > 0 || result.name === family.name);
}

/** A Prometheus text family as OpenMetrics: a counter keeps its type only when its samples end in `_total`, as OpenMetrics requires. */
function textToOpenMetrics(family: MetricFamily): MetricFamily {
  const help = family.help === undefined ? {} : { help: family.help };
  if (family.type === 'counter' && family.name.endsWith('_total')) return { name: family.name.slice(0, -'_total'.length), type: 'counter', ...help, samples: family.samples };
  if (family.type === 'counter' || family.type === 'untyped') return { name: family.name, type: 'unknown', ...help, samples: family.samples };
  return { name: family.name, type: family.type, ...help, samples: family.samples };
}

/** The families as `format` writes them. */
export function convertFamilies(families: readonly MetricFamily[], from: ExpositionFormat, to: ExpositionFormat): MetricFamily[] {
  if (isOpenMetrics(from) === isOpenMetrics(to)) return [...families];
  return isOpenMetrics(to) ? families.map(textToOpenMetrics) : families.flatMap(openMetricsToText);
}

const seriesKey = (sample: Sample) =>
  `${sample.name}\u0000${[...sample.labels]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('\u0000')}`;

export interface MergeResult {
  families: MetricFamily[];
  /** Families left out because an earlier source has one of that name and another type. */
  conflicts: Array<{ name: string; source: string; type: string; keptType: string }>;
}

/**
 * One family per name, in the order first seen: a later source's family of the same name and
 * type adds the series that are not there yet; one of another type is left out. A series (name
 * and labels) is kept once, from the source that came first.
 */
export function mergeFamilies(sources: ReadonlyArray<{ source: string; families: readonly MetricFamily[] }>): MergeResult {
  const merged = new Map<string, MetricFamily>();
  const series = new Set<string>();
  const conflicts: MergeResult['conflicts'] = [];
  for (const { source, families } of sources) {
    for (const family of families) {
      let target = merged.get(family.name);
      if (target && target.type !== family.type) {
        conflicts.push({ name: family.name, source, type: family.type, keptType: target.type });
        continue;
      }
      if (!target) {
        target = { ...family, samples: [] };
        merged.set(family.name, target);
      }
      target.help ??= family.help;
      for (const sample of family.samples) {
        const key = seriesKey(sample);
        if (series.has(key)) continue;
        series.add(key);
        target.samples.push(sample);
      }
    }
  }
  return { families: [...merged.values()], conflicts };
}

/** The families as an exposition in `format`. */
export function writeExposition(families: readonly MetricFamily[], format: ExpositionFormat): string {
  const openMetrics = isOpenMetrics(format);
  const lines: string[] = [];
  for (const family of families) {
    if (family.help !== undefined) lines.push(`# HELP ${family.name} ${escapeHelp(family.help, openMetrics)}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    if (openMetrics && family.unit) lines.push(`# UNIT ${family.name} ${family.unit}`);
    for (const sample of family.samples) {
      const labels = sample.labels.length > 0 ? `{${sample.labels.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(',')}}` : '';
      const timestamp = sample.timestampMs === undefined ? '' : ` ${openMetrics ? sample.timestampMs / 1000 : Math.round(sample.timestampMs)}`;
      lines.push(`${sample.name}${labels} ${sample.value}${timestamp}`);
    }
  }
  if (openMetrics) lines.push('# EOF');
  return `${lines.join('\n')}\n`;
}
