import type { MeasureRuntime } from './measure/measure.js';
import type { Report } from './model.js';
import { type BisectResult, type BisectRunOptions, runBisect } from './run/bisect.js';
import { runCompare } from './run/compare.js';
import type { CompareConfig } from './settings/schema.js';
import { resolveSettings } from './settings/schema.js';

/** Options of compare(): the config-file object plus what only a program can pass. */
export interface CompareOptions
  extends CompareConfig,
    Pick<MeasureRuntime, 'signal' | 'onProgress' | 'env'> {}

/**
 * Compares base and head under load and returns the report (`report.regressed`,
 * `report.scenarios[i].regressed`, metrics with intervals, hot functions): measure → report →
 * the report files in `out` — the run layer's runCompare, as the CLI and the Action call it.
 * Takes the same object as hotpath.config.json. Never exits the process; throws
 * HotpathCompareError on bad settings, a server that fails, or an abort — and leaves no process,
 * worktree or temp dir behind. `render(report)` gives its text forms.
 */
export async function compare(options: CompareOptions): Promise<Report> {
  const { signal, onProgress, env, ...config } = options;
  const settings = resolveSettings({ config, configName: 'compare() options' });
  return (await runCompare(settings, { signal, onProgress, env })).report;
}

/** Options of bisect(): the config-file object, the range, and the search's budget. */
export interface BisectOptions
  extends CompareConfig,
    Pick<BisectRunOptions, 'good' | 'bad' | 'budget' | 'measurementsPerStep' | 'onStep'>,
    Pick<MeasureRuntime, 'signal' | 'onProgress' | 'env'> {}

/**
 * Finds the commit between `good` and `bad` (bad's first-parent history) that made the change:
 * a binary search, each step a paired comparison at the settings given — the run layer's
 * runBisect, as `hotpath bisect` calls it. Returns the whole result (the search, the culprit's
 * report, the files in `out`, the text); throws HotpathCompareError as compare() does.
 */
export async function bisect(options: BisectOptions): Promise<BisectResult> {
  const { signal, onProgress, env, good, bad, budget, measurementsPerStep, onStep, ...config } = options;
  const settings = resolveSettings({ config, configName: 'bisect() options' });
  return runBisect(settings, { signal, onProgress, env, good, bad, budget, measurementsPerStep, onStep });
}
