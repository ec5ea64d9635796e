import { downstreamPerRequest, roundDownstream } from '../downstream-summary.js';
import type { Measurements, MetricName, RoundData, RoundMetrics, ScenarioRound, Side } from '../model.js';
import { memoryPerRequest } from '../round-data.js';
import { METRICS } from '../settings/metrics.js';
import type { RoundPair } from './judge.js';

/**
 * The requests a window's retained bytes are over: its own and those between its opening
 * collection and its start (the settle load). Pure.
 */
export function retainedOver(round: Pick<ScenarioRound, 'load' | 'settleRequests'>): number {
  return round.load.requests.total + (round.settleRequests ?? 0);
}

/** One round's verdict metrics: each of the catalogue's metrics' value in it (settings/metrics.ts). */
export function roundMetrics(round: ScenarioRound): RoundMetrics {
  const requests = round.load.requests.total;
  const over = retainedOver(round);
  const memory = memoryPerRequest(round.monitors, requests, over);
  const downstream = downstreamPerRequest(roundDownstream(round.monitors));
  const data: RoundData = {
    load: round.load,
    monitors: round.monitors,
    requests,
    ...(round.capacity ? { capacity: round.capacity } : {}),
    ...(memory ? { memory } : {}),
    ...(downstream ? { downstream } : {}),
  };
  const values = Object.fromEntries(METRICS.map((m) => [m.metric, m.value(data)])) as Record<
    MetricName,
    number
  >;
  return {
    ...values,
    requests,
    ...(round.settleRequests ? { retainedOver: over } : {}),
    ...(round.otherLoad !== undefined ? { otherLoad: round.otherLoad } : {}),
  };
}

/**
 * Base round k of a shard with head round k of the same shard: in the interleaved order B H B H
 * they ran next to each other, so what the machine did in between (drift, a faster runner for a
 * whole shard) cancels in the pair's ratio.
 */
export function roundPairs<T extends { shard?: number }>(base: readonly T[], head: readonly T[]): [T, T][] {
  const byShard = (list: readonly T[]) => {
    const map = new Map<number, T[]>();
    for (const r of list) {
      const key = r.shard ?? 0;
      const rounds = map.get(key);
      if (rounds) rounds.push(r);
      else map.set(key, [r]);
    }
    return map;
  };
  const heads = byShard(head);
  const pairs: [T, T][] = [];
  for (const [shard, bases] of byShard(base)) {
    const others = heads.get(shard) ?? [];
    bases.forEach((b, i) => {
      const h = others[i];
      if (h) pairs.push([b, h]);
    });
  }
  return pairs;
}

/** A scenario's rounds (with their shard), in the order they ran. */
export function scenarioRounds(
  measurements: Pick<Measurements, Side>,
  name: string,
): Record<Side, (ScenarioRound & { shard: number; round: number })[]> {
  const pick = (side: Side) =>
    measurements[side].map((r) => {
      const found = r.scenarios.find((s) => s.scenario === name);
      if (!found)
        throw new Error(`round ${side} ${r.round} has no result for scenario ${JSON.stringify(name)}`);
      return { ...found, shard: r.shard ?? 1, round: r.round };
    });
  return { base: pick('base'), head: pick('head') };
}

/** The metric pairs of one scenario. */
export function metricPairs(measurements: Pick<Measurements, Side>, name: string): RoundPair[] {
  const rounds = scenarioRounds(measurements, name);
  return roundPairs(rounds.base, rounds.head).map(([b, h]) => boundCapacity(b, h));
}

/**
 * A pair's metrics. A side whose capacity search met the SLO at no rate, beside one that met it,
 * has a capacity below the lowest rate it tried: that rate stands in for it, an upper bound, so
 * the pair's change is understated, never overstated (a head that can no longer meet the SLO at
 * any rate regresses). Both below: no capacity for the pair (the search says why; see
 * measure/capacity.ts).
 */
function boundCapacity(b: ScenarioRound, h: ScenarioRound): RoundPair {
  const base = roundMetrics(b);
  const head = roundMetrics(h);
  const lowest = (round: ScenarioRound) => Math.min(...(round.capacity?.steps ?? []).map((s) => s.rate));
  const below = (round: ScenarioRound) =>
    round.capacity?.capacity === null && round.capacity.steps.length > 0;
  if (below(b) && Number.isFinite(head.capacity)) base.capacity = lowest(b);
  if (below(h) && Number.isFinite(base.capacity)) head.capacity = lowest(h);
  return { base, head };
}
