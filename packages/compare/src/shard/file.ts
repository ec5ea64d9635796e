import { type Dirent, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import type { z } from 'zod';
import { HotpathCompareError } from '../errors.js';
import { checkShardBounds, limitError, RESULTS_LIMITS } from '../limits.js';
import type { AllocationProfile, Profile, RoundResult, Shard, Side } from '../model.js';
import { makeOutputFolder, writeOutputFile } from '../output-file.js';
import { printable } from '../printable.js';
import { resolveRecordedSettings, type Settings } from '../settings/schema.js';
import { shardFolder } from './id.js';
import { fileSize, parseJson } from './read-file.js';
import { allocationProfileSchema, profileSchema, type ResultsFile, resultsSchema } from './schema.js';

/** The name of a shard's results file; the report finds every one below a folder. */
export const RESULTS_FILE = 'hotpath-results.json';

/**
 * Writes one shard's raw results into `<dir>/shard-<i>-of-<n>/`: hotpath-results.json (per
 * round and scenario: counts, the serialised latency histogram, status codes, CPU and monitor
 * data, what each side ran, the settings, the shard) and per round and scenario one CPU profile
 * file, one allocation profile file and one of the survivors (the first round's). Returns the shard's folder.
 */
export function writeShard(dir: string, results: Shard): string {
  const folder = makeOutputFolder(join(resolve(dir), shardFolder(results.shard)), 'results folder');
  makeOutputFolder(join(folder, 'profiles'), 'results folder');
  const rounds = (side: Side) =>
    results.measurements[side].map((r) => ({
      ...r,
      scenarios: r.scenarios.map(({ allocations, survivors, ...s }, i) => {
        const written = (data: unknown, kind: string): string | undefined => {
          if (!data) return undefined;
          const path = `profiles/${side}-${r.round}-${i + 1}${kind}.json`;
          writeOutputFile(join(folder, path), JSON.stringify(data));
          return path;
        };
        return {
          ...s,
          profile: written(s.profile, ''),
          allocationProfile: written(allocations, '.alloc'),
          ...(survivors
            ? {
                survivorsProfile: written(survivors.profile, '.survivors'),
                warmupRequests: survivors.warmupRequests,
              }
            : {}),
        };
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
    ...(results.loadLevels ? { loadLevels: results.loadLevels } : {}),
    ...(results.rateLevels ? { rateLevels: results.rateLevels } : {}),
    ...(results.placement ? { placement: results.placement } : {}),
    base: rounds('base') as ResultsFile['base'],
    head: rounds('head') as ResultsFile['head'],
  };
  writeOutputFile(join(folder, RESULTS_FILE), `${JSON.stringify(file)}\n`);
  return folder;
}

/** Every results file below `dir`, at any depth (as download-artifact lays artifacts out). */
export function findShards(dir: string, depth = 8): string[] {
  const found: string[] = [];
  const walk = (current: string, level: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isFile() && entry.name === RESULTS_FILE) {
        found.push(path);
        // Counted while walking: a crafted artifact of a million folders ends here, not later.
        if (found.length > RESULTS_LIMITS.files)
          throw limitError(
            `the number of ${RESULTS_FILE} files below ${dir}`,
            `more than ${RESULTS_LIMITS.files}`,
            RESULTS_LIMITS.files,
          );
      } else if (entry.isDirectory() && !entry.isSymbolicLink() && level < depth) walk(path, level + 1);
    }
  };
  walk(resolve(dir), 0);
  return found.sort();
}

/**
 * The bytes one report reads, each checked before the file is parsed: every results file and
 * every profile once, at most `totalBytes`; profiles counted at every reference (what the merge
 * and the per-round shares go through), at most `referencedProfileBytes`. Both are also at most
 * an eighth of the heap limit, so a smaller heap gets the clear error rather than an out-of-memory
 * kill.
 */
class ByteBudget {
  private total = 0;
  private referenced = 0;
  private readonly heapShare: number;
  private readonly heapMiB: number;

  constructor() {
    const heap = getHeapStatistics().heap_size_limit;
    this.heapShare = Math.floor(heap * RESULTS_LIMITS.heapShare);
    this.heapMiB = Math.round(heap / 1024 / 1024);
  }

  private check(used: number, fixed: number, what: string): void {
    const limit = Math.min(fixed, this.heapShare);
    if (used <= limit) return;
    throw limitError(
      what,
      `${used} bytes`,
      `${limit} bytes`,
      limit < fixed
        ? `an eighth of this process's heap limit of ${this.heapMiB} MiB; a larger --max-old-space-size in NODE_OPTIONS raises it up to ${fixed} bytes`
        : '',
    );
  }

  add(bytes: number, what: string): void {
    this.total += bytes;
    this.check(
      this.total,
      RESULTS_LIMITS.totalBytes,
      `the size of the results and profiles to report, with ${what},`,
    );
  }

  reference(bytes: number, what: string): void {
    this.referenced += bytes;
    this.check(
      this.referenced,
      RESULTS_LIMITS.referencedProfileBytes,
      `the size of the profiles to merge, each counted at every round that names it, with ${what},`,
    );
  }
}

/** One results file, parsed and checked, its profiles not yet read. */
interface ParsedResults {
  path: string;
  data: ResultsFile;
  settings: Settings;
}

/** Parses and checks one results file (untrusted data: see schema.ts), then its bounds. */
function parseResults(path: string): ParsedResults {
  const parsed = resultsSchema.safeParse(parseJson(path, 'results file'));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (!issue)
      throw new HotpathCompareError(
        'HP_COMPARE_RESULTS',
        `results file ${printable(path)} does not have the expected shape`,
      );
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      `results file ${printable(path)} does not have the expected shape at ${issue.path.map((key) => printable(String(key))).join('.') || '(top)'}: ${printable(issue.message)}`,
    );
  }
  const data = parsed.data;
  const resolved = resolveRecordedSettings({ config: data.settings, configName: `results ${path}` });
  // Results recorded before slices existed measured one server at a time (slice 0), whatever
  // today's default says.
  const settings = 'slice' in data.settings ? resolved : { ...resolved, slice: 0 };
  let windows = 0;
  for (const r of [...data.base, ...data.head]) windows += r.scenarios.length;
  checkShardBounds(
    {
      shard: data.shard,
      rounds: settings.rounds === 'auto' ? settings.maxRounds : settings.rounds,
      base: data.base,
      head: data.head,
      order: data.order,
      scenarios: settings.scenarios.length,
      windows,
    },
    path,
  );
  return { path, data, settings };
}

/** The profile files a round's scenario result names, each beside the results file. */
const PROFILE_FIELDS = ['profile', 'allocationProfile', 'survivorsProfile'] as const;

/** A profile path inside the results file's folder, or undefined (a path out of it is ignored). */
function fullPath(folder: string, rel: string | undefined): string | undefined {
  if (!rel) return undefined;
  const full = resolve(folder, rel);
  return relative(folder, full).startsWith('..') ? undefined : full;
}

/** Each profile file the rounds name checked and counted once (and at every reference). */
function countProfiles(all: readonly ParsedResults[], budget: ByteBudget): void {
  const sizes = new Map<string, number>();
  for (const { path, data } of all) {
    const folder = resolve(path, '..');
    for (const r of [...data.base, ...data.head])
      for (const s of r.scenarios)
        for (const field of PROFILE_FIELDS) {
          const full = fullPath(folder, s[field]);
          if (!full) continue;
          let size = sizes.get(full);
          if (size === undefined) {
            size = fileSize(full, 'profile', folder);
            sizes.set(full, size);
            budget.add(size, `profile ${full}`);
          }
          budget.reference(size, `profile ${full}`);
        }
  }
}

/**
 * Profile files parsed and checked once each, however many rounds name them; a file named as
 * both kinds is checked as each (one kind's check says nothing of the other's shape).
 */
class ProfileFiles {
  private readonly parsed = new Map<string, unknown>();

  private read<T>(full: string | undefined, schema: z.ZodType<unknown>, what: string): T | undefined {
    if (!full) return undefined;
    const key = `${what}\u0000${full}`;
    if (this.parsed.has(key)) return this.parsed.get(key) as T;
    const checked = schema.safeParse(parseJson(full, what));
    if (!checked.success)
      throw new HotpathCompareError(
        'HP_COMPARE_RESULTS',
        `${what} ${printable(full)} does not have the expected shape: ${printable(String(checked.error.issues[0]?.message))}`,
      );
    this.parsed.set(key, checked.data);
    return checked.data as T;
  }

  cpu = (full: string | undefined) => this.read<Profile>(full, profileSchema, 'profile');
  allocations = (full: string | undefined) =>
    this.read<AllocationProfile>(full, allocationProfileSchema, 'allocation profile');
}

/**
 * Reads results files and the profiles they name, within the limits of the report stage
 * (RESULTS_LIMITS): the number of files and their bytes before any is parsed; each file's shard,
 * rounds and scenario results against the settings it carries before its profiles are read; the
 * profiles' bytes before any is parsed. A profile named by many rounds is parsed once and shared.
 */
function readResultsFiles(paths: readonly string[]): Shard[] {
  if (paths.length > RESULTS_LIMITS.files)
    throw limitError(`the number of ${RESULTS_FILE} files`, paths.length, RESULTS_LIMITS.files);
  const budget = new ByteBudget();
  for (const path of paths) budget.add(fileSize(path, 'results file'), `results file ${path}`);
  const all = paths.map(parseResults);
  countProfiles(all, budget);
  const files = new ProfileFiles();
  return all.map(({ path, data, settings }) => {
    const folder = resolve(path, '..');
    const rounds = (list: ResultsFile['base']): RoundResult[] =>
      list.map((r) => ({
        ...r,
        shard: data.shard.index,
        scenarios: r.scenarios.map(({ allocationProfile, survivorsProfile, warmupRequests, ...s }) => {
          const allocations = files.allocations(fullPath(folder, allocationProfile));
          const survivors = files.allocations(fullPath(folder, survivorsProfile));
          return {
            ...s,
            profile: files.cpu(fullPath(folder, s.profile)),
            ...(allocations ? { allocations } : {}),
            ...(survivors && warmupRequests ? { survivors: { warmupRequests, profile: survivors } } : {}),
          };
        }),
      }));
    return {
      shard: data.shard,
      sides: data.sides,
      settings,
      machine: data.environment,
      warnings: data.warnings,
      path,
      ...(data.loadLevels ? { loadLevels: data.loadLevels } : {}),
      ...(data.rateLevels ? { rateLevels: data.rateLevels } : {}),
      ...(data.placement ? { placement: data.placement } : {}),
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
  });
}

/** Reads and checks one shard's results (untrusted data: see schema.ts), within the limits. */
export function readShard(path: string): Shard {
  const [shard] = readResultsFiles([path]);
  if (!shard) throw new HotpathCompareError('HP_COMPARE_RESULTS', `no results in ${path}`);
  return shard;
}

/**
 * Every shard below `dirs` (at any depth, as download-artifact lays artifacts out), read and
 * checked within the limits of the report stage (HP_COMPARE_RESULTS_LIMIT names the one
 * exceeded); HP_COMPARE_RESULTS when there is none.
 */
export function readShards(dirs: readonly string[]): Shard[] {
  const files = dirs.flatMap((dir) => findShards(dir));
  if (files.length === 0)
    throw new HotpathCompareError('HP_COMPARE_RESULTS', `no ${RESULTS_FILE} below ${dirs.join(', ')}`);
  return readResultsFiles(files);
}
