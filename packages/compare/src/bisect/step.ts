// One bisect step: a paired comparison of a probe against the good side through the usual
// measure → report path (real worktrees, installs, rounds: auto stopping when the step's question
// is answered, see half-step.ts); a step left unanswered measured once more and merged; a probe
// that cannot be installed, built or started reported as unbuildable, not thrown.
import { HotpathCompareError } from '../errors.js';
import { type MeasureRuntime, measure } from '../measure/measure.js';
import type { Measurements, Report, Shard, Side } from '../model.js';
import { report } from '../report/report.js';
import type { Settings } from '../settings/schema.js';
import { decidingShare } from '../verdict/policy.js';
import { FIRST_LOOK_PAIRS, type StopQuestion } from '../verdict/sequential.js';
import type { StepChange } from './model.js';

/** Errors of the head side that mean "this commit cannot run", as `git bisect skip` means. */
const UNBUILDABLE = ['HP_COMPARE_COMMAND_FAILED', 'HP_COMPARE_SERVER_EXITED', 'HP_COMPARE_SERVER_NOT_READY'];

export type StepMeasurement =
  | { state: 'measured'; report: Report; shards: Shard[]; seconds: number }
  | { state: 'unbuildable'; reason: string; seconds: number };

/** What one measurement of a step took: in all, in its rounds, and its pairs. */
export interface MeasurementCost {
  seconds: number;
  rounds: number;
  pairs: number;
}

/**
 * What a measurement spends outside its rounds (the worktrees, installs, builds, its report) and
 * what one pair of rounds takes: the most of each among the measurements so far, so that a
 * search's last comparison ends within its budget rather than a pair and its setup past it (one
 * search with a 600 s budget took 605 s). Undefined before the first measurement. Pure.
 */
export function stepCosts(done: readonly MeasurementCost[]): { outside: number; pair: number } | undefined {
  if (done.length === 0) return undefined;
  return {
    outside: Math.max(...done.map((d) => Math.max(0, d.seconds - d.rounds))),
    pair: Math.max(...done.map((d) => (d.pairs > 0 ? d.rounds / d.pairs : 0))),
  };
}

/** Seconds a measurement's rounds may take: what is left of the budget once its setup is paid. Pure. */
export const roundsBudget = (remaining: number, costs: ReturnType<typeof stepCosts>): number =>
  remaining - (costs?.outside ?? 0);

/**
 * Whether a measurement can start: its setup and the pairs of its first look fit in what is left
 * (fewer pairs decide nothing: a measurement cut to one or two would end the search on a range
 * all the same, only later). Pure.
 */
export const measurementFits = (remaining: number, costs: ReturnType<typeof stepCosts>): boolean =>
  roundsBudget(remaining, costs) >= Math.max(1, FIRST_LOOK_PAIRS * (costs?.pair ?? 0));

export interface StepRuntime extends Omit<MeasureRuntime, 'refs' | 'autoRounds' | 'shard'> {
  /** Seconds left of the search's budget: no comparison's rounds run past it. */
  remaining: () => number;
  /** Measurements of one step at most (1 + the times an inconclusive step is measured again). */
  measurements: number;
  /** What the search's measurements so far took (stepCosts); each measurement adds its own. */
  costs: MeasurementCost[];
}

const RANK: Record<string, number> = { regressed: 3, inconclusive: 2 };

/**
 * The verdict metric that decided a report: a regressed one, else one that left it inconclusive,
 * else any — the worst of its class by its change in units of its own margin (a rate's points,
 * retained bytes and relative changes are not comparable as numbers). Among metrics within the
 * margin, by the worse end of the interval: the one that came nearest the margin held the answer
 * longest (p50 at +0.9 % [−6.4, +8.7] %, not an error rate of 0 [0, 0]).
 */
export function decidingChange(result: Report): StepChange | null {
  let best: (StepChange & { rank: number; badness: number }) | null = null;
  for (const s of result.scenarios)
    for (const m of s.metrics) {
      if (!m.inVerdict || !Number.isFinite(m.change)) continue;
      const rank = RANK[m.outcome] ?? 1;
      const worseOf = (x: number) => (m.better === 'lower' ? x : -x);
      const worse = rank === 1 && m.ci ? Math.max(worseOf(m.ci[0]), worseOf(m.ci[1])) : worseOf(m.change);
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

/** The step's measurements as one, each keeping its shard (rounds pair within a measurement). */
export function mergedMeasurements(list: readonly Pick<Measurements, Side>[]): Pick<Measurements, Side> {
  const tag = (side: Side) => list.flatMap((m, i) => m[side].map((r) => ({ ...r, shard: i + 1 })));
  return { base: tag('base'), head: tag('head') };
}

/** The share of alpha the deciding look of each measurement spent: the smallest (report.ts's rule). */
export const stepShare = (shards: readonly Shard[]) => decidingShare(shards.map((s) => s.measurements.stop));

/** A measurement's cost: its rounds from their first start to their last end, and its pairs. */
function measurementCost(shard: Shard, seconds: number): MeasurementCost {
  const m = shard.measurements;
  const rounds = (Date.parse(m.finishedAt) - Date.parse(m.startedAt)) / 1000;
  return {
    seconds,
    rounds: Number.isFinite(rounds) ? Math.min(seconds, Math.max(0, rounds)) : 0,
    pairs: Math.min(m.base.length, m.head.length),
  };
}

/**
 * Measures `probe` against `good`; again (merged) while its question is unanswered and the budget
 * allows. `question` is asked of every measurement so far merged (see half-step.ts).
 */
export async function measureStep(
  settings: Settings,
  good: string,
  probe: string,
  runtime: StepRuntime,
  question: StopQuestion,
): Promise<StepMeasurement> {
  const { remaining, measurements, costs, ...measureRuntime } = runtime;
  const started = Date.now();
  const seconds = () => (Date.now() - started) / 1000;
  const shards: Shard[] = [];
  let result: Report | undefined;
  for (let attempt = 1; attempt <= measurements; attempt++) {
    const spent = stepCosts(costs);
    if (attempt > 1 && !measurementFits(remaining(), spent)) break;
    const budget = roundsBudget(remaining(), spent);
    const attemptStarted = Date.now();
    let shard: Shard;
    try {
      shard = await measure(
        {
          ...settings,
          base: undefined,
          head: undefined,
          baseStart: undefined,
          headStart: undefined,
          maxTime: Math.max(1, Math.min(settings.maxTime, Math.floor(budget))),
        },
        {
          ...measureRuntime,
          refs: {
            base: { ref: good.slice(0, 12), sha: good },
            head: { ref: probe.slice(0, 12), sha: probe },
          },
          autoRounds: (m, share) =>
            question(mergedMeasurements([...shards.map((x) => x.measurements), m]), share),
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
    costs.push(measurementCost(shard, (Date.now() - attemptStarted) / 1000));
    // Each measurement is a shard of the step: pairs stay within it, the report merges them.
    const numbered = shards.map((s, i) => ({ ...s, shard: { index: i + 1, total: shards.length } }));
    result = report(numbered);
    if (question(mergedMeasurements(shards.map((x) => x.measurements)), stepShare(shards))) break;
  }
  if (!result) throw new HotpathCompareError('HP_COMPARE_ABORTED', 'no time was left for a comparison');
  return { state: 'measured', report: result, shards, seconds: seconds() };
}
