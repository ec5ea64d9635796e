// One scenario judged under the verdict policy: its verdict metrics over the round pairs, the hot
// functions (when they are asked for), and the outcome failOn makes of them. report() and each
// look of rounds: auto call this one function, so a look stops on exactly what decides the report.
import type {
  HotFunctionDiff,
  Measurements,
  MetricVerdict,
  Outcome,
  Profile,
  ScenarioRound,
  Side,
} from '../model.js';
import { mergeRounds, withFunctionIntervals } from './function-verdict.js';
import { diffHotFunctions } from './hot-functions.js';
import { judgeMetrics, type RoundPair, spoiled } from './judge.js';
import { decideScenario, type LookLevels, type VerdictPolicy, verdictMetricsOf } from './policy.js';
import { roundMetrics, roundPairs, scenarioRounds } from './round-pairs.js';

export interface ScenarioVerdict {
  rounds: Record<Side, (ScenarioRound & { shard: number; round: number })[]>;
  pairs: number;
  metrics: MetricVerdict[];
  profiles: Record<Side, Profile | undefined>;
  hotFunctions?: HotFunctionDiff;
  /** A function grew significantly (whether or not failOn lets that decide). */
  functionRegressed: boolean;
  outcome: Outcome;
}

/**
 * Judges one scenario. `functions: false` skips the hot functions (a look whose outcome they
 * cannot change: failOn metrics); report() always asks for them, to show them.
 */
export function judgeScenario(
  measurements: Pick<Measurements, Side>,
  name: string,
  policy: VerdictPolicy,
  levels: LookLevels,
  options: { functions: boolean },
): ScenarioVerdict {
  const rounds = scenarioRounds(measurements, name);
  const pairs = roundPairs(rounds.base, rounds.head);
  const metricPairs = pairs.map(([b, h]): RoundPair => ({ base: roundMetrics(b), head: roundMetrics(h) }));
  const metrics = judgeMetrics(metricPairs, {
    threshold: policy.threshold,
    retainedThreshold: policy.retainedThreshold,
    metrics: verdictMetricsOf(policy, name),
    alpha: levels.alpha,
    equivalenceAlpha: levels.equivalenceAlpha,
  });
  const profileOf = (list: ScenarioRound[]) =>
    options.functions ? mergeRounds(list.flatMap((r) => (r.profile ? [r.profile] : []))) : undefined;
  const profiles = { base: profileOf(rounds.base), head: profileOf(rounds.head) };
  // Profiles sample wall-clock time: a neighbour that takes the CPU in one round of a pair shifts
  // its shares (a thread preempted in a syscall is sampled there), so spoiled pairs are left out.
  const clean = pairs.filter((_, i) => !spoiled(metricPairs[i] as RoundPair));
  const hotFunctions =
    profiles.base && profiles.head
      ? withFunctionIntervals(
          diffHotFunctions(profiles.base, profiles.head, policy.hotThreshold),
          clean,
          levels.functionAlpha,
        )
      : undefined;
  const functionRegressed = (hotFunctions?.flagged ?? []).some(
    (f) => f.reason === 'grew' && f.significant === true,
  );
  return {
    rounds,
    pairs: pairs.length,
    metrics,
    profiles,
    ...(hotFunctions ? { hotFunctions } : {}),
    functionRegressed,
    outcome: decideScenario(policy, metrics, functionRegressed),
  };
}
