// The verdict's settings, the third group of the one settings table (settings/table.ts, which
// spreads them in): what a regression is, which metrics decide it, and what fails the run.
import { DEFAULT_METRICS, METRIC_NAMES } from './metrics.js';
import type { SettingSpec } from './setting-spec.js';

export const VERDICT_SETTINGS = [
  // verdict
  {
    key: 'profiler',
    kind: 'enum',
    group: 'verdict',
    arg: 'NAME',
    default: 'cpuprofile',
    values: ['cpuprofile', 'prof', 'none'],
    description:
      'cpuprofile (v8-profiler-next, falling back to node:inspector), prof (node --prof, shows C++ frames) or none.',
  },
  {
    key: 'memory',
    kind: 'enum',
    group: 'verdict',
    arg: 'on|off',
    default: 'on',
    values: ['on', 'off'],
    description:
      "on: the probe measures memory per request (a full collection at each edge of the measured window, outside its clocks — the opening one in the warm-up's last second — and every collection in the window); off: it does not, and the memory metrics are absent.",
  },
  {
    key: 'waiting',
    kind: 'enum',
    group: 'verdict',
    arg: 'on|calls|off',
    default: 'on',
    values: ['on', 'calls', 'off'],
    description:
      "on: the probe records every downstream call (databases, caches, services: node:http/https, fetch, TCP and Unix sockets) by endpoint and by the function that made it, and each request's waiting (the requests' async contexts, made once the server makes its first call); calls: the same without the requests' contexts (no waiting per request, no 'awaited in series'); off: nothing, and the waiting metrics are absent.",
  },
  {
    key: 'threshold',
    kind: 'percent',
    group: 'verdict',
    comparisonOnly: true,
    arg: 'PCT',
    unit: '%',
    default: 5,
    min: 0,
    max: 1000,
    description:
      'Relative change (percent) a significant difference must exceed to count as a regression; a metric whose interval stays within it is unchanged.',
  },
  {
    key: 'hotThreshold',
    kind: 'percent',
    group: 'verdict',
    comparisonOnly: true,
    arg: 'PTS',
    unit: 'points',
    default: 5,
    min: 0,
    max: 100,
    description: "Growth of a function's self-time share (percentage points) that flags it as hotter.",
  },
  {
    key: 'retainedThreshold',
    kind: 'number',
    group: 'verdict',
    comparisonOnly: true,
    arg: 'BYTES',
    unit: 'B/req',
    default: 64,
    min: 0,
    max: 1_000_000_000,
    description:
      'Bytes per request still alive after a full collection at the end of the measured window, beyond those at its start (JS heap and external memory), that count as a leak: retained bytes regress when their interval lies above it, and are unchanged when it stays within it.',
  },
  {
    key: 'metrics',
    kind: 'choices',
    group: 'verdict',
    comparisonOnly: true,
    arg: 'LIST',
    default: DEFAULT_METRICS,
    values: METRIC_NAMES,
    description: 'Metrics that can make a scenario regress (comma separated); the others are shown only.',
  },
  {
    key: 'failOn',
    kind: 'enum',
    group: 'verdict',
    comparisonOnly: true,
    arg: 'WHAT',
    default: 'metrics',
    values: ['metrics', 'functions', 'both'],
    description:
      'What counts as a regression: metrics, hotter functions (self-time share grown by more than hotThreshold with an interval above zero), or both.',
  },
  {
    key: 'failOnRegression',
    kind: 'boolean',
    group: 'verdict',
    comparisonOnly: true,
    default: false,
    description: 'Fail (exit 1, or fail the step) when a scenario regressed.',
  },
  {
    key: 'failOnInconclusive',
    kind: 'boolean',
    group: 'verdict',
    comparisonOnly: true,
    default: false,
    description:
      'Fail (exit 1, or fail the step) when the run could not tell: some scenario is inconclusive (the noise was larger than the threshold).',
  },
  {
    key: 'out',
    kind: 'path',
    group: 'verdict',
    arg: 'DIR',
    default: 'hotpath-report',
    input: false,
    description: 'Directory for report.json, report.md, folded stacks and flame graphs.',
  },
] as const satisfies readonly SettingSpec[];
