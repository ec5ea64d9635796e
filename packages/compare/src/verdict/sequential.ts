import type { Look, Measurements, Outcome, Side } from '../model.js';
import type { Settings } from '../settings/schema.js';
import { combineOutcomes } from './judge.js';
import {
  functionsDecide,
  lookLevels,
  type PolicySettings,
  type VerdictPolicy,
  verdictPolicy,
} from './policy.js';
import { judgeScenario } from './scenario-verdict.js';

// rounds: auto looks at the data after each pair and stops once the answer is clear. Looking
// again and again inflates false alarms unless each look pays for itself: alpha spending. Look j
// spends a share s_j of each test's alpha, the shares sum to at most 1, and every interval of
// look j is at level 1 − s_j·alpha. By the union bound, the chance that any interval of any look
// misses the true change is at most alpha — the same guarantee as one look at a fixed count, so
// stopping on whatever look is clear keeps the error rate (Lan–DeMets, with a power spending
// function). The spending follows f(t) = t², t = pairs / the pairs the budget allows: early looks
// get little (only a large change is clear after three pairs), later looks more, and the last
// look (budget or max-rounds reached) spends what is left.

/** Pairs before the first look (fewer give no usable interval). */
export const FIRST_LOOK_PAIRS = 3;

/** Exponent of the spending function f(t) = t^RHO (2: between Pocock and O'Brien–Fleming). */
export const RHO = 2;

/**
 * The share of alpha the look at `pairs` spends, given what earlier looks spent and the pairs the
 * run can reach (`planned`); a final look spends all that is left.
 */
export function alphaShare(pairs: number, planned: number, spent: number, final: boolean): number {
  if (final) return Math.max(0, 1 - spent);
  // planned + 1: a look before the last never spends everything, so the last one has a share.
  const t = Math.min(1, pairs / (Math.max(pairs, planned) + 1));
  return Math.max(0, t ** RHO - spent);
}

/**
 * The run's outcome from the pairs measured so far, at one look's share of alpha: each scenario
 * judged as report() judges it (the hot functions too, where failOn lets them decide). `ready`
 * is false while a scenario's outcome is decided but a metric the policy waits for on it (p99 at
 * a rate: see waitsFor) is still inconclusive; such a look does not stop the run.
 */
export function outcomeSoFar(
  measurements: Pick<Measurements, Side>,
  scenarios: readonly { name: string }[],
  policy: VerdictPolicy,
  share: number,
): { outcome: Outcome; ready: boolean } {
  const levels = lookLevels(policy, share);
  let ready = true;
  const outcomes = scenarios.map((s) => {
    const verdict = judgeScenario(measurements, s.name, policy, levels, {
      functions: functionsDecide(policy),
    });
    const waiting = (policy.waitFor[s.name] ?? []).some(
      (m) => verdict.metrics.find((v) => v.metric === m)?.outcome === 'inconclusive',
    );
    if (waiting && verdict.outcome !== 'inconclusive') ready = false;
    return verdict.outcome;
  });
  return { outcome: combineOutcomes(outcomes), ready };
}

/**
 * A question of the caller's own that ends the rounds in place of the run's outcome (a bisect
 * step asks which side of half the step a probe sits): given the pairs so far and the share of
 * alpha this look spends, whether it is answered.
 */
export type StopQuestion = (measurements: Pick<Measurements, Side>, share: number) => boolean;

/** What the round loop needs to decide after each pair. */
export interface LookDecision {
  look?: Look;
  /** The run's outcome at this look (when one was taken). */
  outcome?: Outcome;
  stop?: 'conclusive' | 'max-time' | 'max-rounds';
}

/**
 * After pair `pairs` of rounds: auto — whether to look, and whether to stop. `elapsedMs` is the
 * rounds' time so far (it sets the pairs the budget allows), `spent` the shares spent.
 */
export function decideAfterPair(options: {
  measurements: Pick<Measurements, Side>;
  settings: PolicySettings & Pick<Settings, 'scenarios' | 'maxRounds' | 'maxTime'>;
  pairs: number;
  elapsedMs: number;
  spent: number;
  /** Asked at each look instead of the run's outcome (the outcome is then not judged). */
  question?: StopQuestion;
}): LookDecision {
  const { pairs, elapsedMs, settings } = options;
  const perPair = elapsedMs / pairs;
  const budgetMs = settings.maxTime * 1000;
  const planned = Math.max(pairs, Math.min(settings.maxRounds, Math.floor(budgetMs / Math.max(perPair, 1))));
  const atMax = pairs >= settings.maxRounds;
  const outOfTime = elapsedMs + perPair > budgetMs;
  const final = atMax || outOfTime;
  if (pairs < FIRST_LOOK_PAIRS && !final) return {};
  const share = alphaShare(pairs, planned, options.spent, final);
  if (share <= 0 && !final) return {};
  const look: Look = { pairs, alphaShare: share };
  if (options.question) {
    if (share > 0 && options.question(options.measurements, share)) return { look, stop: 'conclusive' };
    return final ? { look, stop: atMax ? 'max-rounds' : 'max-time' } : { look };
  }
  const { outcome, ready } =
    share > 0
      ? outcomeSoFar(options.measurements, settings.scenarios, verdictPolicy(settings), share)
      : { outcome: 'inconclusive' as const, ready: true };
  if (outcome !== 'inconclusive' && ready) return { look, outcome, stop: 'conclusive' };
  if (final) return { look, outcome, stop: atMax ? 'max-rounds' : 'max-time' };
  return { look, outcome };
}
