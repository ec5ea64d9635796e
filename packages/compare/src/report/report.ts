import type { Report, ReportSettings, Shard, Side } from '../model.js';
import type { Settings } from '../settings/schema.js';
import { combineOutcomes, POWER } from '../verdict/judge.js';
import { decidingShare, lookLevels, verdictPolicy } from '../verdict/policy.js';
import { analyseScenario } from './scenario.js';
import { mergeShards, type ReportRules, reportSettings } from './shards.js';

/** Settings as the report shows them (no header values or body: they may hold secrets). */
export function echoSettings(settings: Settings): ReportSettings {
  return {
    ...settings,
    scenarios: settings.scenarios.map(({ headers, body, requests, ...rest }) => ({
      ...rest,
      headers: Object.keys(headers),
      body: body !== undefined,
      ...(requests ? { requests: requests.length } : {}),
    })),
  };
}

/**
 * The report stage: merges the shards (one or many, from one runner or several), settles the
 * settings (what was measured from the shards, the verdict's rules from `rules`), and turns the
 * rounds into the report: paired intervals, verdicts, hot functions, diagnosis, merged profiles.
 * Pure: no clock, no machine, no files.
 */
export function report(shards: readonly Shard[], rules: ReportRules = {}): Report {
  const merged = mergeShards(shards);
  const settings = reportSettings(merged.settings, rules);
  const { measurements } = merged;
  // One family of tests for the whole run: every verdict metric of every scenario, judged at the
  // levels of the policy (verdict/policy.ts); with rounds: auto, at the share of alpha the deciding
  // look spent (verdict/sequential.ts).
  const policy = verdictPolicy(settings);
  const levels = lookLevels(policy, decidingShare(merged.stops));
  const scenarios = settings.scenarios.map((s) => analyseScenario(measurements, s, policy, levels));
  const all = [...measurements.base, ...measurements.head];
  const warnings = [...(rules.warnings ?? []), ...merged.warnings, ...all.flatMap((r) => r.warnings)];
  const pairs = Math.min(...scenarios.map((s) => s.pairs));
  if (pairs < 2) warnings.push('fewer than two round pairs: no interval can be computed, nothing is flagged');
  for (const s of scenarios)
    if (!s.hotFunctions && settings.profiler !== 'none')
      warnings.push(`${s.name}: no CPU profile on one side, so no hot-function diff`);
  for (const [i, s] of scenarios.entries()) {
    const behind = rateNotHeld(settings.scenarios[i]?.rate, s.rounds);
    if (behind) warnings.push(`${s.name}: ${behind}`);
  }
  const profilers = (side: Side) => [
    ...new Set(measurements[side].flatMap((r) => r.scenarios.flatMap((s) => s.profilers))),
  ];
  const outcome = combineOutcomes(scenarios.map((s) => s.outcome));
  return {
    outcome,
    regressed: outcome === 'regressed',
    improved: outcome === 'improved',
    scenarios,
    throughputChange: Math.min(...scenarios.map((s) => s.throughputChange)),
    statistics: {
      method: 'paired-t',
      tests: policy.tests,
      alpha: levels.alpha,
      equivalenceAlpha: levels.equivalenceAlpha,
      familyLevel: 1 - policy.familyAlpha,
      power: POWER,
    },
    stop: merged.stops,
    shards: merged.shards,
    rounds: measurements.base.length,
    order: measurements.order,
    sides: merged.sides,
    settings: echoSettings(settings),
    environment: {
      machines: merged.machines,
      serverNode: all.find((r) => r.serverNode)?.serverNode,
      profilers: { base: profilers('base'), head: profilers('head') },
      ...(merged.loadLevels ? { loadLevels: merged.loadLevels } : {}),
      ...(merged.rateLevels ? { rateLevels: merged.rateLevels } : {}),
      ...(merged.placement ? { placement: merged.placement } : {}),
    },
    links: rules.links,
    warnings: [...new Set(warnings)],
    startedAt: measurements.startedAt,
    finishedAt: measurements.finishedAt,
  };
}

/** A held rate is one base served to within this share in its median round. */
const RATE_HELD = 0.95;

/**
 * At a fixed rate, whether base's server kept up: the median of its rounds' requests/s against
 * the rate. A rate past what the server can take in the rounds makes its latencies a growing
 * queue's, which say more about the rate than about the change. Undefined when it kept up.
 */
export function rateNotHeld(
  rate: number | string | undefined,
  rounds: readonly { side: Side; requestsPerSecond: number }[],
): string | undefined {
  if (typeof rate !== 'number') return undefined;
  const served = rounds
    .filter((r) => r.side === 'base' && Number.isFinite(r.requestsPerSecond))
    .map((r) => r.requestsPerSecond)
    .sort((a, b) => a - b);
  if (served.length === 0) return undefined;
  const median = served[Math.floor(served.length / 2)] as number;
  if (median >= RATE_HELD * rate) return undefined;
  return `base served ${Math.round(median)} of the ${Math.round(rate)} req/s asked (the median of its rounds): the rate is past what its server takes in the rounds, so the latencies are a growing queue's; lower the rate (or its share of the capacity)`;
}
