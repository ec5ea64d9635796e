// One bisect step: a paired comparison of a probe against the good side through the usual
// measure → report path (real worktrees, installs, rounds: auto with its sequential stop); an
// inconclusive step measured once more and merged (more pairs, the same verdict rule); a probe
// that cannot be installed, built or started reported as unbuildable, not thrown.
import { HotpathCompareError } from '../errors.js';
import { type MeasureRuntime, measure } from '../measure/measure.js';
import type { Report, Shard } from '../model.js';
import { report } from '../report/report.js';
import type { Settings } from '../settings/schema.js';
import type { StepChange } from './model.js';

/** Errors of the head side that mean "this commit cannot run", as `git bisect skip` means. */
const UNBUILDABLE = ['HP_COMPARE_COMMAND_FAILED', 'HP_COMPARE_SERVER_EXITED', 'HP_COMPARE_SERVER_NOT_READY'];

export type StepMeasurement =
  | { state: 'measured'; report: Report; shards: Shard[]; seconds: number }
  | { state: 'unbuildable'; reason: string; seconds: number };

export interface StepRuntime extends Omit<MeasureRuntime, 'refs' | 'autoRounds' | 'shard'> {
  /** Seconds left of the search's budget: no comparison's rounds run past it. */
  remaining: () => number;
  /** Measurements of one step at most (1 + the times an inconclusive step is measured again). */
  measurements: number;
}

const RANK: Record<string, number> = { regressed: 3, inconclusive: 2 };

/**
 * The verdict metric that decided a report: a regressed one, else one that left it inconclusive,
 * else any — the worst of its class by its change in units of its own margin (a rate's points,
 * retained bytes and relative changes are not comparable as numbers).
 */
export function decidingChange(result: Report): StepChange | null {
  let best: (StepChange & { rank: number; badness: number }) | null = null;
  for (const s of result.scenarios)
    for (const m of s.metrics) {
      if (!m.inVerdict || !Number.isFinite(m.change)) continue;
      const rank = RANK[m.outcome] ?? 1;
      const worse = m.better === 'lower' ? m.change : -m.change;
      const badness = worse / (m.margin && m.margin > 0 ? m.margin : 1);
      if (!best || rank > best.rank || (rank === best.rank && badness > best.badness))
        best = {
          scenario: s.name,
          metric: m.metric,
          unit: m.unit,
          better: m.better,
          change: m.change,
          ci: m.ci,
          rank,
          badness,
        };
    }
  if (!best) return null;
  const { rank: _rank, badness: _badness, ...change } = best;
  return change;
}

/**
 * The side of an inconclusive probe, from the step the search has already measured: the regressed
 * steps against good measured the whole step S on their deciding metric; a probe whose interval
 * of that metric lies below S/2 is on the good side, above it on the bad side (which of the two
 * levels, 0 or S, it sits at — not whether it is within the threshold of good, which a probe at 0
 * needs many more pairs to show). Undefined when the interval straddles S/2 or nothing is known.
 */
export function sideOfHalfStep(result: Report, known: readonly StepChange[]): 'bad' | 'good' | undefined {
  const first = known[0];
  if (!first) return undefined;
  const same = known.filter((k) => k.metric === first.metric && k.scenario === first.scenario);
  const worse = (k: Pick<StepChange, 'better'>, x: number) => (k.better === 'lower' ? x : -x);
  const half = same.reduce((n, k) => n + worse(k, k.change), 0) / same.length / 2;
  const m = result.scenarios
    .find((sc) => sc.name === first.scenario)
    ?.metrics.find((x) => x.metric === first.metric);
  if (!m?.ci || !(half > 0)) return undefined;
  const [lo, hi] = [worse(m, m.ci[0]), worse(m, m.ci[1])].sort((a, b) => a - b) as [number, number];
  if (hi < half) return 'good';
  if (lo > half) return 'bad';
  return undefined;
}

/** Measures `probe` against `good`; again (merged) while inconclusive and the budget allows. */
export async function measureStep(
  settings: Settings,
  good: string,
  probe: string,
  runtime: StepRuntime,
): Promise<StepMeasurement> {
  const { remaining, measurements, ...measureRuntime } = runtime;
  const started = Date.now();
  const seconds = () => (Date.now() - started) / 1000;
  const shards: Shard[] = [];
  let result: Report | undefined;
  for (let attempt = 1; attempt <= measurements; attempt++) {
    if (attempt > 1 && remaining() < 1) break;
    let shard: Shard;
    try {
      shard = await measure(
        {
          ...settings,
          base: undefined,
          head: undefined,
          baseStart: undefined,
          headStart: undefined,
          maxTime: Math.max(1, Math.min(settings.maxTime, Math.floor(remaining()))),
        },
        {
          ...measureRuntime,
          refs: {
            base: { ref: good.slice(0, 12), sha: good },
            head: { ref: probe.slice(0, 12), sha: probe },
          },
        },
      );
    } catch (err) {
      if (err instanceof HotpathCompareError && err.side === 'head' && UNBUILDABLE.includes(err.code))
        return {
          state: 'unbuildable',
          reason: `${err.code}: ${err.message.split('\n')[0] ?? ''}`,
          seconds: seconds(),
        };
      throw err;
    }
    shards.push(shard);
    // Each measurement is a shard of the step: pairs stay within it, the report merges them.
    const numbered = shards.map((s, i) => ({ ...s, shard: { index: i + 1, total: shards.length } }));
    result = report(numbered);
    if (result.outcome !== 'inconclusive') break;
  }
  if (!result) throw new HotpathCompareError('HP_COMPARE_ABORTED', 'no time was left for a comparison');
  return { state: 'measured', report: result, shards, seconds: seconds() };
}
