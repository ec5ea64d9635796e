// One drift run: the branch head against the fixed reference, with the same interleaved, paired
// rounds as a pull request's comparison — measure → report → one history point. Storing the
// point (a file, the results branch) and publishing are the run layer's and the front doors'
// jobs. Measuring (a shard) and making the point (report → point) are separate steps, so a job
// that runs the repository's code can measure and another, holding the write token, record.
import { resolve } from 'node:path';
import { HotpathCompareError } from '../errors.js';
import { gitRoot, resolveCommit } from '../measure/checkout.js';
import { type MeasureRuntime, measure } from '../measure/measure.js';
import type { Report, Shard } from '../model.js';
import { report } from '../report/report.js';
import type { ReportRules } from '../report/shards.js';
import type { Settings } from '../settings/schema.js';
import type { HistoryPoint, Reference } from './history.js';
import { pointFromReport } from './point.js';
import { resolveReference } from './reference.js';

export interface DriftRun {
  reference: Reference;
  shard: Shard;
  report: Report;
  point: HistoryPoint;
}

/** The drift measurement: head against the reference, as one shard (what a measure job uploads). */
export interface DriftShard {
  reference: Reference;
  shard: Shard;
}

/**
 * Measures head (default HEAD) against the reference (`tag:GLOB` or a ref): the shard only, no
 * report. The settings' own base/head refs are replaced by the reference and head.
 */
export async function measureDriftShard(
  settings: Settings,
  referenceSpec: string,
  runtime: Omit<MeasureRuntime, 'refs'> & { head?: string } = {},
): Promise<DriftShard> {
  const root = await gitRoot(resolve(runtime.baseDir ?? process.cwd(), settings.cwd));
  const reference = await resolveReference(root, referenceSpec);
  const headRef = runtime.head ?? 'HEAD';
  const headSha = await resolveCommit(root, headRef);
  const shard = await measure(
    { ...settings, base: undefined, head: undefined, baseStart: undefined, headStart: undefined },
    {
      // A drift point is worth its precision: with rounds: auto, measure the whole budget
      // (a verdict stops at ±threshold, too wide for steps of a few percent).
      autoRounds: 'budget',
      ...runtime,
      refs: { base: { ref: reference.ref, sha: reference.sha }, head: { ref: headRef, sha: headSha } },
    },
  );
  return { reference, shard };
}

/**
 * A drift run from its shards (one, or a measure job's shards read back): the report, and the
 * point of head against the reference — the report's base side, which must name its commit.
 */
export function driftRunOf(
  shards: readonly Shard[],
  options: { rules?: ReportRules; pointId?: string } = {},
): DriftRun {
  const [shard] = shards;
  if (!shard)
    throw new HotpathCompareError('HP_COMPARE_RESULTS', 'a drift run needs its results (none given)');
  const result = report([...shards], options.rules);
  const { ref, sha } = result.sides.base;
  if (!ref || !sha || !result.sides.head.sha)
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      'these results are not a drift run: a drift run compares two commits (the reference and head), and these name no commit for one side',
    );
  return {
    reference: { ref, sha },
    shard,
    report: result,
    point: pointFromReport(result, { id: options.pointId }),
  };
}

/** Measures head against the reference, reports, and makes the point: one drift run in one process. */
export async function measureDrift(
  settings: Settings,
  referenceSpec: string,
  runtime: Omit<MeasureRuntime, 'refs'> & { head?: string; rules?: ReportRules; pointId?: string } = {},
): Promise<DriftRun> {
  const { rules, pointId, ...measureRuntime } = runtime;
  const { shard } = await measureDriftShard(settings, referenceSpec, measureRuntime);
  return driftRunOf([shard], { rules, pointId });
}
