import type { Profile } from '@hotpath/tick-parser';
import type { Measurements, RoundRow, ScenarioReport, Side } from '../model.js';
import type { Scenario } from '../settings/schema.js';
import { diffAllocations, diffSurvivors } from '../verdict/allocation-diff.js';
import { diffDownstream } from '../verdict/downstream-diff.js';
import { functionsDecide, type LookLevels, type VerdictPolicy } from '../verdict/policy.js';
import { retainedOver, roundMetrics } from '../verdict/round-pairs.js';
import { judgeScenario } from '../verdict/scenario-verdict.js';
import { allocationFlameProfile } from './allocation-flames.js';
import { capacityFindings, diagnose } from './diagnosis.js';
import { waitingFlameProfile } from './waiting-flames.js';

function describeTarget(scenario: Scenario): string {
  if (scenario.requests?.length) {
    const first = scenario.requests.map((r) => `${r.method ?? scenario.method} ${r.path ?? scenario.url}`);
    return first.length > 3
      ? `${first.slice(0, 3).join(', ')} … (${first.length} requests in turn)`
      : first.join(', ');
  }
  return `${scenario.method} ${scenario.url}`;
}

/** A profile of each side built from its rounds (sides without one left out): the flame graphs'. */
function bothSides(
  rounds: Record<Side, Measurements['base'][number]['scenarios']>,
  build: (side: Measurements['base'][number]['scenarios']) => Profile | undefined,
): { base?: Profile; head?: Profile } {
  const base = build(rounds.base);
  const head = build(rounds.head);
  return { ...(base ? { base } : {}), ...(head ? { head } : {}) };
}

/** The allocation diff and the survivors diff, each where both sides have its profiles. */
function withAllocations(
  rounds: Record<Side, Measurements['base'][number]['scenarios']>,
  alpha: number,
): Pick<ScenarioReport, 'allocations' | 'survivors'> {
  const allocations = diffAllocations(rounds.base, rounds.head, alpha);
  const survivors = diffSurvivors(rounds.base, rounds.head, alpha);
  return { ...(allocations ? { allocations } : {}), ...(survivors ? { survivors } : {}) };
}

/** What the requests waited for, where both sides recorded their downstream calls. */
function withDownstream(
  rounds: Record<Side, Measurements['base'][number]['scenarios']>,
  alpha: number,
): Pick<ScenarioReport, 'downstream'> {
  const downstream = diffDownstream(rounds.base, rounds.head, alpha);
  return downstream ? { downstream } : {};
}

/** Metrics with intervals, hot functions, diagnosis and the verdict of one scenario. */
export function analyseScenario(
  measurements: Measurements,
  scenario: Scenario,
  policy: VerdictPolicy,
  levels: LookLevels,
): ScenarioReport {
  const judged = judgeScenario(measurements, scenario.name, policy, levels, { functions: true });
  const { rounds, metrics, hotFunctions, profiles, outcome } = judged;
  const functionsRegressed = functionsDecide(policy) && judged.functionRegressed;
  const requests = (side: Side) => rounds[side].reduce((n, r) => n + r.load.requests.total, 0);
  const retained = (side: Side) => rounds[side].reduce((n, r) => n + retainedOver(r), 0);
  const diagnosis = diagnose(
    rounds.base.flatMap((r) => r.monitors),
    rounds.head.flatMap((r) => r.monitors),
    { base: requests('base'), head: requests('head') },
    { base: retained('base'), head: retained('head') },
  );
  diagnosis.findings.push(...capacityFindings(rounds));
  const throughput = metrics.find((m) => m.metric === 'requestsPerSecond');
  // The rows in the order the rounds ran: one pass, each side's next round in turn (linear).
  const next: Record<Side, number> = { base: 0, head: 0 };
  const rows: RoundRow[] = [];
  for (const side of measurements.order) {
    const r = rounds[side][next[side]++];
    if (!r) continue;
    rows.push({
      side,
      round: r.round,
      shard: r.shard,
      ...roundMetrics(r),
      requests: r.load.requests.total,
      errors: r.load.errors,
      non2xx: r.load.non2xx,
      profilers: r.profilers,
      ...(r.capacity ? { capacitySearch: r.capacity } : {}),
      ...(r.sliceSeconds !== undefined ? { sliceSeconds: r.sliceSeconds } : {}),
    });
  }
  return {
    name: scenario.name,
    target: describeTarget(scenario),
    outcome,
    regressed: outcome === 'regressed',
    improved: outcome === 'improved',
    pairs: judged.pairs,
    metrics,
    throughputChange: throughput?.change ?? 0,
    hotFunctions,
    ...withAllocations(rounds, levels.functionAlpha),
    ...withDownstream(rounds, levels.functionAlpha),
    functionsRegressed,
    diagnosis,
    rounds: rows,
    profiles,
    allocationProfiles: bothSides(rounds, allocationFlameProfile),
    waitingProfiles: bothSides(rounds, waitingFlameProfile),
  };
}
