// A strict reader of Prometheus expositions, for tests: it throws on whatever a scraper could
// refuse or misread (a family's HELP or TYPE twice or after its samples, a family split in two,
// a series twice, a sample name its type does not allow, a line that is no metric), so that a
// test which reads an answer with it knows the answer is one valid exposition.

export interface StrictSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface StrictFamily {
  type: string;
  help?: string;
  samples: StrictSample[];
}

const TYPES = {
  text: ['counter', 'gauge', 'histogram', 'summary', 'untyped'],
  openmetrics: ['counter', 'gauge', 'histogram', 'gaugehistogram', 'stateset', 'info', 'summary', 'unknown'],
} as const;

const SAMPLE_SUFFIXES: Record<string, readonly string[]> = {
  'text/counter': [''],
  'text/gauge': [''],
  'text/untyped': [''],
  'text/histogram': ['_bucket', '_sum', '_count'],
  'text/summary': ['', '_sum', '_count'],
  'openmetrics/counter': ['_total', '_created'],
  'openmetrics/gauge': [''],
  'openmetrics/unknown': [''],
  'openmetrics/stateset': [''],
  'openmetrics/info': ['_info'],
  'openmetrics/histogram': ['_bucket', '_sum', '_count', '_created'],
  'openmetrics/gaugehistogram': ['_bucket', '_gsum', '_gcount'],
  'openmetrics/summary': ['', '_sum', '_count', '_created'],
};

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (\S+))?$/;
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\[\\"n])*)"(,|$)/;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest !== '') {
    const match = LABEL.exec(rest);
    if (!match) throw new Error(`invalid labels in line: ${line}`);
    const [whole, name = '', value = ''] = match;
    if (name in labels) throw new Error(`label ${name} twice in line: ${line}`);
    labels[name] = value.replace(/\\(.)/g, (_, next: string) => (next === 'n' ? '\n' : next));
    rest = rest.slice(whole.length);
  }
  return labels;
}

/** The families of the exposition by name; throws on the first thing that makes it invalid. */
export function readStrictExposition(text: string, format: 'text' | 'openmetrics'): Map<string, StrictFamily> {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  const lines = text.slice(0, -1).split('\n');
  if (format === 'openmetrics' && lines.at(-1) !== '# EOF') throw new Error('an OpenMetrics exposition must end with # EOF');
  const families = new Map<string, StrictFamily>();
  const typed = new Set<string>();
  const closed = new Set<string>();
  const series = new Set<string>();
  let current: string | undefined;
  const enter = (name: string) => {
    if (current !== name) {
      if (current !== undefined) closed.add(current);
      if (closed.has(name)) throw new Error(`the family ${name} comes back after another family`);
      current = name;
    }
    let family = families.get(name);
    if (!family) {
      family = { type: format === 'text' ? 'untyped' : 'unknown', samples: [] };
      families.set(name, family);
    }
    return family;
  };
  for (const [index, line] of lines.entries()) {
    if (format === 'openmetrics' && line === '# EOF') {
      if (index !== lines.length - 1) throw new Error('# EOF before the end');
      continue;
    }
    const metadata = /^# (HELP|TYPE|UNIT) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
    if (metadata) {
      const [, keyword = '', name = '', argument = ''] = metadata;
      const family = enter(name);
      if (family.samples.length > 0) throw new Error(`# ${keyword} of ${name} after its samples`);
      if (keyword === 'HELP') {
        if (family.help !== undefined) throw new Error(`second HELP of ${name}`);
        family.help = argument;
      } else if (keyword === 'TYPE') {
        if (typed.has(name)) throw new Error(`second TYPE of ${name}`);
        if (!(TYPES[format] as readonly string[]).includes(argument)) throw new Error(`unknown type ${argument} of ${name}`);
        typed.add(name);
        family.type = argument;
      } else if (format === 'text') {
        throw new Error(`# UNIT in a Prometheus text exposition: ${line}`);
      }
      continue;
    }
    if (line.startsWith('#')) {
      if (format === 'openmetrics') throw new Error(`comment in an OpenMetrics exposition: ${line}`);
      continue;
    }
    if (line === '' && format === 'text') continue;
    const sample = SAMPLE.exec(line);
    if (!sample) throw new Error(`not a sample: ${JSON.stringify(line)}`);
    const [, sampleName = '', labelText = '', valueText = ''] = sample;
    const value = Number(valueText.replace(/^\+?Inf$/i, 'Infinity').replace(/^-Inf$/i, '-Infinity'));
    if (Number.isNaN(value) && valueText !== 'NaN') throw new Error(`not a value: ${line}`);
    const owner =
      current !== undefined && (SAMPLE_SUFFIXES[`${format}/${families.get(current)!.type}`] ?? []).some((suffix) => current + suffix === sampleName) ? current : sampleName;
    const family = enter(owner);
    if (!(SAMPLE_SUFFIXES[`${format}/${family.type}`] ?? []).some((suffix) => owner + suffix === sampleName)) throw new Error(`${sampleName} cannot be a sample of the ${family.type} ${owner}`);
    const labels = parseLabels(labelText, line);
    if (sampleName.endsWith('_bucket') && family.type.endsWith('histogram') && labels.le === undefined) throw new Error(`bucket without le: ${line}`);
    const key = `${sampleName}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
    if (series.has(key)) throw new Error(`series twice: ${line}`);
    series.add(key);
    family.samples.push({ name: sampleName, labels, value });
  }
  return families;
}
