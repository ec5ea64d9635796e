import { HotpathCompareError } from '../errors.js';
import { checkShardBounds, limitError, RESULTS_LIMITS } from '../limits.js';
import type { Machine, RoundsStop, Shard, Side, SourceLinks } from '../model.js';
import { isReporterKey, REPORTER_KEYS } from '../settings/reporter-keys.js';
import { type RawValues, resolveRecordedSettings, type Settings } from '../settings/schema.js';

/** What the reporting side adds to the shards. */
export interface ReportRules {
  /** The reporter's own config object (its file): only its REPORTER_KEYS are used. */
  config?: Record<string, unknown>;
  configName?: string;
  /** The reporter's flags or inputs, REPORTER_KEYS only (a front door refuses or drops the rest). */
  overrides?: RawValues;
  overridesSource?: 'flag' | 'input';
  /** Where source links point (the Action: the PR's head commit). */
  links?: SourceLinks;
  /** Warnings to carry into the report. */
  warnings?: string[];
}

/**
 * The one settings precedence of a report: what was measured from the (first) shard; the
 * REPORTER_KEYS from the reporter's overrides, then its config, then the shard.
 */
export function reportSettings(measured: Settings, rules: ReportRules): Settings {
  const extra = Object.keys(rules.overrides ?? {}).filter((key) => !isReporterKey(key));
  if (extra.length > 0)
    throw new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      `${extra.join(', ')} describe${extra.length > 1 ? '' : 's'} the measurement, which the results already fix; a report decides only ${REPORTER_KEYS.join(', ')}`,
    );
  // report() is public: a Shard may come from any caller, so its settings are checked again
  // (recorded names as hotpath makes them), with the reporter's keys laid over them.
  const config: Record<string, unknown> = { ...measured };
  for (const key of REPORTER_KEYS) if (rules.config?.[key] !== undefined) config[key] = rules.config[key];
  return resolveRecordedSettings({
    config,
    configName: rules.configName ? `the results with ${rules.configName}` : 'the results',
    overrides: rules.overrides,
    overridesSource: rules.overridesSource,
  });
}

const sameMachine = (a: Machine, b: Machine) =>
  a.name === b.name &&
  a.cpuModel === b.cpuModel &&
  a.cpus === b.cpus &&
  a.node === b.node &&
  a.platform === b.platform;

/**
 * Merges shards into one: every round keeps its shard, so the statistics pair each base round
 * with its neighbouring head round within that shard. The shards must have measured the same
 * commits and the same scenarios, each shard once.
 */
export function mergeShards(
  shards: readonly Shard[],
): Shard & { shards: number; machines: Machine[]; stops: RoundsStop[] } {
  const [first, ...rest] = shards;
  if (!first) throw new HotpathCompareError('HP_COMPARE_RESULTS', 'no results to merge');
  // The bounds readShards checks on files, checked again on shards from any caller (report() is
  // public): the number of shards, each shard's id, its rounds against its own settings.
  if (shards.length > RESULTS_LIMITS.shards)
    throw limitError('the number of shards to merge', shards.length, RESULTS_LIMITS.shards);
  for (const s of shards) {
    let windows = 0;
    for (const r of s.measurements.base) windows += r.scenarios.length;
    for (const r of s.measurements.head) windows += r.scenarios.length;
    checkShardBounds(
      {
        shard: s.shard,
        rounds: s.settings.rounds === 'auto' ? s.settings.maxRounds : s.settings.rounds,
        base: s.measurements.base,
        head: s.measurements.head,
        order: s.measurements.order,
        scenarios: s.settings.scenarios.length,
        windows,
      },
      s.path ?? 'given to report()',
    );
  }
  const id = (s: Shard) => `${s.shard.index}/${s.shard.total}`;
  for (const s of rest) {
    const same = (side: Side) => s.sides[side].sha === first.sides[side].sha;
    if (!same('base') || !same('head'))
      throw new HotpathCompareError(
        'HP_COMPARE_RESULTS',
        `shard ${id(s)} measured other commits (base ${s.sides.base.sha ?? '?'}, head ${s.sides.head.sha ?? '?'}) than shard ${id(first)} (base ${first.sides.base.sha ?? '?'}, head ${first.sides.head.sha ?? '?'})`,
      );
    if (s.measurements.scenarios.join('\u0000') !== first.measurements.scenarios.join('\u0000'))
      throw new HotpathCompareError(
        'HP_COMPARE_RESULTS',
        `shard ${id(s)} measured other scenarios than shard ${id(first)}`,
      );
  }
  const seen = new Set<string>();
  for (const s of shards) {
    if (seen.has(id(s)))
      throw new HotpathCompareError('HP_COMPARE_RESULTS', `shard ${id(s)} appears twice in the results`);
    seen.add(id(s));
  }
  const machines: Machine[] = [];
  for (const s of shards) if (!machines.some((m) => sameMachine(m, s.machine))) machines.push(s.machine);
  const all = (side: Side) =>
    shards.flatMap((s) => s.measurements[side].map((r) => ({ ...r, shard: s.shard.index })));
  const times = shards.map((s) => s.measurements);
  // ISO timestamps: their text order is their time order.
  const starts = times.map((t) => t.startedAt).sort();
  const ends = times.map((t) => t.finishedAt).sort();
  return {
    ...first,
    shards: shards.length,
    machines,
    stops: shards.map((s) => s.measurements.stop ?? { rounds: 'fixed', reason: 'fixed', looks: [] }),
    warnings: [...new Set(shards.flatMap((s) => s.warnings))],
    measurements: {
      base: all('base'),
      head: all('head'),
      order: shards.flatMap((s) => s.measurements.order),
      scenarios: first.measurements.scenarios,
      startedAt: starts[0] ?? first.measurements.startedAt,
      finishedAt: ends[ends.length - 1] ?? first.measurements.finishedAt,
    },
  };
}
