import type { Report } from '../model.js';
import { formatDuration } from '../settings/duration.js';
import { flagOf, SETTINGS, type SettingSpec } from '../settings/table.js';

/** A word for /bin/sh: bare when it is plainly safe, otherwise in single quotes. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

const specs = SETTINGS as readonly SettingSpec[];
/** Settings given separately: the sides, the commits, and where the files go (a local choice). */
const SEPARATE = new Set(['start', 'baseStart', 'headStart', 'base', 'head', 'out']);
const SCENARIO = ['url', 'method', 'connections', 'pipelining', 'rate', 'slo'];

export interface Reproduction {
  /** The whole command: `own` then `requested`. */
  command: string;
  /**
   * hotpath's part: `npx -p @hotpath/compare hotpath compare`, the two commits and `--config`
   * (the caller's own file). Nothing here comes from the report's settings.
   */
  own: string;
  /**
   * The settings as flags (when no config is given), from the report's settings — in a report
   * job, what the results file, written where the pull request's code ran, asked for (its start,
   * install and build commands included). '' when there are none.
   */
  requested: string;
  /** What the command cannot carry (header values, bodies, several scenarios without a config). */
  missing: string[];
}

/**
 * The `hotpath compare` command that repeats a report's run on a developer's machine: the two
 * commits, and either `--config FILE` or the run's settings as flags (those that differ from
 * the defaults). Values are shell-quoted; what no flag can carry is listed in `missing`.
 */
export function reproduceCommand(
  report: Report,
  options: { config?: string; base?: string; head?: string } = {},
): Reproduction {
  const ownWords = ['npx', '-p', '@hotpath/compare', 'hotpath', 'compare'];
  const words: string[] = [];
  const missing: string[] = [];
  if (options.base) ownWords.push('--base', options.base);
  if (options.head) ownWords.push('--head', options.head);
  const flag = (key: string, value: unknown) => {
    const spec = specs.find((s) => s.key === key);
    const name = spec && flagOf(spec);
    if (!spec || !name || value === undefined || value === null || value === '') return;
    if (JSON.stringify(value) === JSON.stringify(spec.default)) return;
    if (spec.kind === 'boolean') {
      if (value === true) words.push(`--${name}`);
      return;
    }
    const text =
      spec.kind === 'duration' && typeof value === 'number'
        ? formatDuration(value).replace(' ', '').replace('min', 'm')
        : Array.isArray(value)
          ? value.join(',')
          : String(value);
    words.push(`--${name}`, text);
  };
  if (options.config) {
    ownWords.push('--config', options.config);
  } else {
    const s = report.settings;
    if (s.start !== undefined) flag('start', s.start);
    else {
      flag('baseStart', s.baseStart);
      flag('headStart', s.headStart);
    }
    for (const spec of specs)
      if (!spec.scenario && !SEPARATE.has(spec.key)) flag(spec.key, (s as Record<string, unknown>)[spec.key]);
    if (s.scenarios.length > 1) missing.push(`${s.scenarios.length} scenarios, in a config file`);
    const [scenario] = s.scenarios;
    if (scenario) {
      // A rate given as a share of base's capacity is repeated as that share, not the rate it made.
      const share = report.environment.rateLevels?.find((r) => r.scenario === scenario.name)?.share;
      for (const key of SCENARIO)
        flag(
          key,
          key === 'rate' && share !== undefined ? `${share}%` : (scenario as Record<string, unknown>)[key],
        );
      if (scenario.headers.length > 0) missing.push(`the values of headers ${scenario.headers.join(', ')}`);
      if (scenario.body) missing.push('the request body');
      if (scenario.requests) missing.push('the request list');
    }
  }
  const own = ownWords.map(shellWord).join(' ');
  const requested = words.map(shellWord).join(' ');
  return { command: requested ? `${own} ${requested}` : own, own, requested, missing };
}
