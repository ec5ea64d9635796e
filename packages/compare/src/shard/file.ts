import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { HotpathCompareError } from '../errors.js';
import type { Profile, RoundResult, Shard, Side } from '../model.js';
import { resolveRecordedSettings } from '../settings/schema.js';
import { shardFolder } from './id.js';
import { profileSchema, type ResultsFile, resultsSchema } from './schema.js';

/** The name of a shard's results file; the report finds every one below a folder. */
export const RESULTS_FILE = 'hotpath-results.json';

const MAX_FILE_BYTES = 256 * 1024 * 1024;

/**
 * Writes one shard's raw results into `<dir>/shard-<i>-of-<n>/`: hotpath-results.json (per
 * round and scenario: counts, the serialised latency histogram, status codes, CPU and monitor
 * data, what each side ran, the settings, the shard) and one profile file per round and scenario.
 * Returns the shard's folder.
 */
export function writeShard(dir: string, results: Shard): string {
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
    environment: results.machine,
    warnings: results.warnings,
    order: results.measurements.order,
    scenarios: results.measurements.scenarios,
    startedAt: results.measurements.startedAt,
    finishedAt: results.measurements.finishedAt,
    ...(results.measurements.stop ? { stop: results.measurements.stop } : {}),
    base: rounds('base') as ResultsFile['base'],
    head: rounds('head') as ResultsFile['head'],
  };
  writeFileSync(join(folder, RESULTS_FILE), `${JSON.stringify(file)}\n`);
  return folder;
}

/** Every results file below `dir`, at any depth (as download-artifact lays artifacts out). */
export function findShards(dir: string, depth = 8): string[] {
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
export function readShard(path: string): Shard {
  const parsed = resultsSchema.safeParse(readJson(path, 'results file'));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (!issue)
      throw new HotpathCompareError(
        'HP_COMPARE_RESULTS',
        `results file ${path} does not have the expected shape`,
      );
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      `results file ${path} does not have the expected shape at ${issue.path.map(String).join('.') || '(top)'}: ${issue.message}`,
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
  const settings = resolveRecordedSettings({ config: data.settings, configName: `results ${path}` });
  return {
    shard: data.shard,
    sides: data.sides,
    settings,
    machine: data.environment,
    warnings: data.warnings,
    path,
    measurements: {
      base: rounds(data.base),
      head: rounds(data.head),
      order: data.order,
      scenarios: data.scenarios,
      startedAt: data.startedAt,
      finishedAt: data.finishedAt,
      ...(data.stop ? { stop: data.stop } : {}),
    },
  };
}

/**
 * Every shard below `dirs` (at any depth, as download-artifact lays artifacts out), read and
 * checked; HP_COMPARE_RESULTS when there is none.
 */
export function readShards(dirs: readonly string[]): Shard[] {
  const files = dirs.flatMap((dir) => findShards(dir));
  if (files.length === 0)
    throw new HotpathCompareError('HP_COMPARE_RESULTS', `no ${RESULTS_FILE} below ${dirs.join(', ')}`);
  return files.map(readShard);
}
