// One drift run: the branch head against the fixed reference, with the same interleaved, paired
// rounds as a pull request's comparison — measure → report → one history point. Storing the
// point (a file, the results branch) and publishing are the front doors' jobs.
import { resolve } from 'node:path';
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

/**
 * Measures head (default HEAD) against the reference (`tag:GLOB` or a ref) and makes the point.
 * The settings' own base/head refs are replaced by the reference and head.
 */
export async function measureDrift(
  settings: Settings,
  referenceSpec: string,
  runtime: Omit<MeasureRuntime, 'refs'> & { head?: string; rules?: ReportRules; pointId?: string } = {},
): Promise<DriftRun> {
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
  const result = report([shard], runtime.rules);
  return { reference, shard, report: result, point: pointFromReport(result, { id: runtime.pointId }) };
}
