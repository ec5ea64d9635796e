// The questions a bisect step asks of its pairs, at each look of rounds: auto and at its end.
// Until a step has shown a change, a probe asks: is it worse than good, and by how much (the step
// S, on the verdict metric that shows it most clearly), or within the threshold of it? Once S is
// known, each probe asks which of the two levels it sits at — below S/2 (good side) or above it
// (bad side) — a question that needs far fewer pairs than "within the threshold of good" when S
// is well above the noise.
import type { Measurements, MetricVerdict, Side } from '../model.js';
import type { Settings } from '../settings/schema.js';
import { judgeMetrics } from '../verdict/judge.js';
import { lookLevels, type VerdictPolicy, verdictMetricsOf, verdictPolicy } from '../verdict/policy.js';
import { metricPairs } from '../verdict/round-pairs.js';
import { FIRST_LOOK_PAIRS, outcomeSoFar, type StopQuestion } from '../verdict/sequential.js';
import type { StepChange } from './model.js';

/**
 * One-sided level of each half-step decision (times the look's share of it, as the verdict's
 * intervals): placing a probe at level 0 on the bad side, or one at level S on the good side.
 * A wrong placement narrows the search to a range without the step, whose own comparison then
 * shows no step: the search ends on a range, never on a wrong commit named as certain.
 */
export const HALF_STEP_ALPHA = 0.05;

const worse = (better: 'higher' | 'lower', x: number) => (better === 'lower' ? x : -x);

/**
 * Which side of half the step an interval of the step's metric lies on: wholly below S/2 (as
 * "how much worse") is the good side, wholly above it the bad side; across it, undefined.
 */
export function sideOfInterval(
  ci: readonly [number, number] | null,
  step: StepChange,
): 'bad' | 'good' | undefined {
  const half = worse(step.better, step.change) / 2;
  if (!ci || !(half > 0)) return undefined;
  const [lo, hi] = [worse(step.better, ci[0]), worse(step.better, ci[1])].sort((a, b) => a - b) as [
    number,
    number,
  ];
  if (hi < half) return 'good';
  if (lo > half) return 'bad';
  return undefined;
}

/** The metrics of one scenario judged at an interval level of `alpha`. */
function judged(
  measurements: Pick<Measurements, Side>,
  scenario: string,
  policy: VerdictPolicy,
  alpha: number,
): MetricVerdict[] {
  return judgeMetrics(metricPairs(measurements, scenario), {
    threshold: policy.threshold,
    retainedThreshold: policy.retainedThreshold,
    metrics: verdictMetricsOf(policy, scenario),
    alpha,
    equivalenceAlpha: policy.familyAlpha,
  });
}

/** The step's metric on a probe, its interval as two one-sided bounds at HALF_STEP_ALPHA each. */
const halfStepMetric = (
  measurements: Pick<Measurements, Side>,
  step: StepChange,
  policy: VerdictPolicy,
  share: number,
) =>
  judged(measurements, step.scenario, policy, 2 * HALF_STEP_ALPHA * share).find(
    (x) => x.metric === step.metric,
  );

/** A probe's side of half the step, from its pairs, at a look spending `share`. */
export function halfStepSide(
  measurements: Pick<Measurements, Side>,
  step: StepChange,
  policy: VerdictPolicy,
  share: number,
): 'bad' | 'good' | undefined {
  const m = halfStepMetric(measurements, step, policy, share);
  return m ? sideOfInterval(m.ci, step) : undefined;
}

const toChange = (scenario: string, m: MetricVerdict): StepChange => ({
  scenario,
  metric: m.metric,
  unit: m.unit,
  better: m.better,
  change: m.change,
  ci: m.ci,
});

/**
 * Pairs the step that sets S goes on for when only a wall-clock metric shows it: every later probe
 * is then placed by a CPU metric when one shows it too (a step CPU does not show, such as waiting
 * on a database, still ends two pairs later).
 */
const WALL_CLOCK_WAIT = 2;

/** Counted by the probe from each process's own CPU clock: the least noisy metrics here. */
const CPU_METRICS = new Set(['cpuPerRequest', 'mainThreadCpuPerRequest']);

/**
 * The step a probe made over good, when its pairs show one: of the verdict metrics whose interval
 * (at the verdict's level for the look) lies wholly on the worse side and whose change is at least
 * half the margin, the one furthest from zero in units of its interval's half-width — the metric
 * the probes can be placed by in the fewest pairs. A CPU metric that shows the step is taken
 * before a wall-clock one: from three pairs a wall-clock interval can be narrow by chance
 * (requests/s −12.1 % [−12.2, −12.0] % in one bench search, ±24 % on the next probe). Undefined
 * when no metric shows a step.
 */
export function stepShown(
  measurements: Pick<Measurements, Side>,
  scenarios: readonly { name: string }[],
  policy: VerdictPolicy,
  share: number,
): StepChange | undefined {
  const { alpha } = lookLevels(policy, share);
  let best: { change: StepChange; z: number; cpu: boolean } | undefined;
  for (const { name } of scenarios)
    for (const m of judged(measurements, name, policy, alpha)) {
      if (!m.inVerdict || !m.ci || !Number.isFinite(m.change)) continue;
      const margin = m.unit === 'B' ? policy.retainedThreshold : policy.threshold;
      const lo = Math.min(worse(m.better, m.ci[0]), worse(m.better, m.ci[1]));
      const width = Math.abs(m.ci[1] - m.ci[0]) / 2;
      const size = worse(m.better, m.change);
      if (!(lo > 0) || size < margin / 2 || !(width > 0)) continue;
      const shown = { change: toChange(name, m), z: size / width, cpu: CPU_METRICS.has(m.metric) };
      if (!best || (shown.cpu && !best.cpu) || (shown.cpu === best.cpu && shown.z > best.z)) best = shown;
    }
  return best?.change;
}

/** The questions of one search: both take the settings' policy once. */
export function stepQuestions(settings: Settings) {
  const policy = verdictPolicy(settings);
  const outcome = (m: Pick<Measurements, Side>, share: number) =>
    outcomeSoFar(m, settings.scenarios, policy, share);
  return {
    policy,
    /**
     * A step before S is known: answered by an outcome that shows no change beyond the threshold,
     * or by a step shown (stepShown) on a CPU metric — on another metric alone, WALL_CLOCK_WAIT
     * pairs later.
     */
    sizing: ((m, share) => {
      const so = outcome(m, share);
      if (so.ready && (so.outcome === 'unchanged' || so.outcome === 'not-worse' || so.outcome === 'improved'))
        return true;
      const shown = stepShown(m, settings.scenarios, policy, share);
      // a wall-clock metric alone waits WALL_CLOCK_WAIT more pairs for a CPU metric to show it
      return (
        shown !== undefined &&
        (CPU_METRICS.has(shown.metric) || m.base.length >= FIRST_LOOK_PAIRS + WALL_CLOCK_WAIT)
      );
    }) satisfies StopQuestion as StopQuestion,
    /** A probe: answered by its side of half the step, or by the verdict's own regression. */
    probe:
      (step: StepChange): StopQuestion =>
      (m, share) =>
        halfStepSide(m, step, policy, share) !== undefined || outcome(m, share).outcome === 'regressed',
  };
}

/** What a measured step says: the step S it shows, or its side of S/2, and the change shown. */
export interface Placement {
  verdict: 'bad' | 'good' | 'undecided';
  change: StepChange | null;
  decidedBy?: 'half-step';
}

/**
 * Before S is known (no `step` yet): bad with the step it shows, good when the verdict's outcome
 * says no change beyond the threshold, else undecided. A probe: its side of half the step when
 * its interval shows one, else bad when the verdict regressed (change null: the regressed
 * metric is the caller's to name), else undecided.
 */
export function placeStep(
  measurements: Pick<Measurements, Side>,
  outcome: string,
  scenarios: readonly { name: string }[],
  policy: VerdictPolicy,
  share: number,
  step?: StepChange,
): Placement {
  if (!step) {
    if (outcome === 'unchanged' || outcome === 'not-worse' || outcome === 'improved')
      return { verdict: 'good', change: null };
    const shown = stepShown(measurements, scenarios, policy, share);
    return shown ? { verdict: 'bad', change: shown } : { verdict: 'undecided', change: null };
  }
  const m = halfStepMetric(measurements, step, policy, share);
  const change = m ? toChange(step.scenario, m) : null;
  const side = m ? sideOfInterval(m.ci, step) : undefined;
  if (side) return { verdict: side, change, decidedBy: 'half-step' };
  // regressed by the verdict: the change shown is the metric that regressed (the caller's
  // decidingChange), not S's metric, whose interval did not decide
  return outcome === 'regressed' ? { verdict: 'bad', change: null } : { verdict: 'undecided', change };
}
