import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, relative, resolve } from 'node:path';
import type { Profile } from '@hotpath/tick-parser';
import type { SideInfo } from '../analyse/analyse.js';
import { HotpathCompareError, type Side } from '../errors.js';
import type { Measurements } from '../measure/measure.js';
import type { RoundResult } from '../measure/round.js';
import type { Settings } from '../settings/schema.js';
import { profileSchema, type ResultsFile, resultsSchema } from './schema.js';
import { type ShardId, shardFolder } from './shard.js';

/** The name of a shard's results file; the report finds every one below a folder. */
export const RESULTS_FILE = 'hotpath-results.json';

const MAX_FILE_BYTES = 256 * 1024 * 1024;

export interface ShardResults {
  shard: ShardId;
  sides: Record<Side, SideInfo>;
  settings: Settings;
  measurements: Measurements;
  environment: ResultsFile['environment'];
  warnings: string[];
  /** Where the shard's results were read from. */
  path?: string;
}

/**
 * Writes one shard's raw results into `<dir>/shard-<i>-of-<n>/`: hotpath-results.json (per
 * round and scenario: counts, the serialised latency histogram, status codes, CPU and monitor
 * data, what each side ran, the settings, the shard) and one profile file per round and scenario.
 * Returns the shard's folder.
 */
export function writeResults(dir: string, results: Omit<ShardResults, 'environment' | 'path'>): string {
  const folder = join(resolve(dir), shardFolder(results.shard));
  mkdirSync(join(folder, 'profiles'), { recursive: true });
  const rounds = (side: Side) =>
    results.measurements[side].map((r) => ({
      ...r,
      scenarios: r.scenarios.map((s, i) => {
        let profile: string | undefined;
        if (s.profile) {
          profile = `profiles/${side}-${r.round}-${i + 1}.json`;
          writeFileSync(join(folder, profile), JSON.stringify(s.profile));
        }
        return { ...s, profile };
      }),
    }));
  const file: ResultsFile = {
    schema: 'hotpath-results/1',
    shard: results.shard,
    sides: results.sides,
    settings: results.settings as unknown as Record<string, unknown>,
    environment: {
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
    },
    warnings: results.warnings,
    order: results.measurements.order,
    scenarios: results.measurements.scenarios,
    startedAt: results.measurements.startedAt,
    finishedAt: results.measurements.finishedAt,
    base: rounds('base') as ResultsFile['base'],
    head: rounds('head') as ResultsFile['head'],
  };
  writeFileSync(join(folder, RESULTS_FILE), `${JSON.stringify(file)}\n`);
  return folder;
}

/** Every results file below `dir`, at any depth (as download-artifact lays artifacts out). */
export function findResults(dir: string, depth = 8): string[] {
  const found: string[] = [];
  const walk = (current: string, level: number) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isFile() && entry.name === RESULTS_FILE) found.push(path);
      else if (entry.isDirectory() && !entry.isSymbolicLink() && level < depth) walk(path, level + 1);
    }
  };
  walk(resolve(dir), 0);
  return found.sort();
}

function readJson(path: string, what: string): unknown {
  const size = statSync(path).size;
  if (size > MAX_FILE_BYTES)
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      `${what} ${path} is ${size} bytes: expected at most ${MAX_FILE_BYTES}`,
    );
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      `${what} ${path} is not valid JSON: ${(err as Error).message}`,
    );
  }
}

/** Reads and checks one shard's results (untrusted data: see schema.ts). */
export function readShard(path: string, settingsOf: (raw: unknown) => Settings): ShardResults {
  const parsed = resultsSchema.safeParse(readJson(path, 'results file'));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      `results file ${path} does not have the expected shape at ${issue.path.join('.') || '(top)'}: ${issue.message}`,
    );
  }
  const data = parsed.data;
  const folder = resolve(path, '..');
  const profileOf = (rel: string | undefined): Profile | undefined => {
    if (!rel) return undefined;
    const full = resolve(folder, rel);
    if (relative(folder, full).startsWith('..')) return undefined;
    const checked = profileSchema.safeParse(readJson(full, 'profile'));
    if (!checked.success)
      throw new HotpathCompareError(
        'HP_COMPARE_RESULTS',
        `profile ${full} does not have the expected shape: ${checked.error.issues[0]?.message}`,
      );
    return checked.data as Profile;
  };
  const rounds = (list: ResultsFile['base']): RoundResult[] =>
    list.map((r) => ({
      ...r,
      shard: data.shard.index,
      scenarios: r.scenarios.map((s) => ({ ...s, profile: profileOf(s.profile) })),
    }));
  const settings = settingsOf(data.settings);
  return {
    shard: data.shard,
    sides: data.sides,
    settings,
    environment: data.environment,
    warnings: data.warnings,
    path,
    measurements: {
      base: rounds(data.base),
      head: rounds(data.head),
      order: data.order,
      scenarios: data.scenarios,
      startedAt: data.startedAt,
      finishedAt: data.finishedAt,
    },
  };
}

/**
 * Merges shards into one set of measurements: every round keeps its shard, so the statistics
 * pair each base round with its neighbouring head round within that shard. The shards must
 * have measured the same commits and the same scenarios.
 */
export function mergeShards(shards: readonly ShardResults[]): ShardResults & { shards: number } {
  const first = shards[0];
  if (!first) throw new HotpathCompareError('HP_COMPARE_RESULTS', 'no results to merge');
  for (const s of shards.slice(1)) {
    const same = (side: Side) => s.sides[side].sha === first.sides[side].sha;
    if (!same('base') || !same('head'))
      throw new HotpathCompareError(
        'HP_COMPARE_RESULTS',
        `shard ${s.shard.index}/${s.shard.total} measured other commits (base ${s.sides.base.sha ?? '?'}, head ${s.sides.head.sha ?? '?'}) than shard ${first.shard.index}/${first.shard.total} (base ${first.sides.base.sha ?? '?'}, head ${first.sides.head.sha ?? '?'})`,
      );
    if (s.measurements.scenarios.join('\u0000') !== first.measurements.scenarios.join('\u0000'))
      throw new HotpathCompareError(
        'HP_COMPARE_RESULTS',
        `shard ${s.shard.index}/${s.shard.total} measured other scenarios than shard ${first.shard.index}/${first.shard.total}`,
      );
  }
  const seen = new Set<string>();
  for (const s of shards) {
    const key = `${s.shard.index}/${s.shard.total}`;
    if (seen.has(key))
      throw new HotpathCompareError('HP_COMPARE_RESULTS', `shard ${key} appears twice in the results`);
    seen.add(key);
  }
  const all = (side: Side) => shards.flatMap((s) => s.measurements[side]);
  const times = shards.map((s) => s.measurements);
  return {
    ...first,
    shards: shards.length,
    warnings: [...new Set(shards.flatMap((s) => s.warnings))],
    measurements: {
      base: all('base'),
      head: all('head'),
      order: shards.flatMap((s) => s.measurements.order),
      scenarios: first.measurements.scenarios,
      startedAt: times.map((t) => t.startedAt).sort()[0]!,
      finishedAt: times
        .map((t) => t.finishedAt)
        .sort()
        .at(-1)!,
    },
  };
}
