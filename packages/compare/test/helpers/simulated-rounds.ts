// Simulated auto-rounds comparisons: rounds with multiplicative noise, looked at after each pair
// as measureRounds looks (verdict/sequential.ts), for tests of the sequential stop and of the
// questions that replace it (a bisect step's).
import type { MonitorSummary, RoundResult, Side } from '../../src/model.js';
import type { MetricName, Settings } from '../../src/settings/schema.js';
import type { PolicySettings } from '../../src/verdict/policy.js';
import { decideAfterPair, type StopQuestion } from '../../src/verdict/sequential.js';

export const METRICS: MetricName[] = [
  'requestsPerSecond',
  'p50',
  'errorRate',
  'cpuPerRequest',
  'mainThreadCpuPerRequest',
];

const monitor = (cpuMicros: number, mainThreadCpuMicros: number): MonitorSummary => ({
  pid: 1,
  durationMs: 5000,
  cpuMicros,
  mainThreadCpuMicros,
  delayMean: 1,
  delayP99: 2,
  delayMax: 3,
  utilization: 0.9,
  heapStart: 1,
  heapEnd: 1,
  heapMax: 1,
  rssStart: 1,
  rssEnd: 1,
  heapSeries: [],
});

/** One simulated round: throughput and CPU per request with multiplicative noise. */
export function simulatedRound(
  side: Side,
  round: number,
  rps: number,
  cpu: number,
  mainThread: number,
): RoundResult {
  const total = Math.round(rps * 5);
  return {
    side,
    round,
    pids: [1],
    warnings: [],
    scenarios: [
      {
        scenario: 's',
        load: {
          duration: 5,
          requests: { total, mean: rps, perSecond: [] },
          latency: { mean: 40_000 / rps, p50: 40_000 / rps, p90: 60_000 / rps, p99: 90_000 / rps, max: 1 },
          statusCodes: {},
          non2xx: 0,
          errors: 0,
          errorsByKind: {},
        },
        monitors: [monitor(cpu * total, mainThread * total)],
        profilers: [],
      },
    ],
  };
}

export const settings: Omit<PolicySettings, 'scenarios'> &
  Pick<Settings, 'scenarios' | 'maxRounds' | 'maxTime'> = {
  metrics: METRICS,
  threshold: 5,
  hotThreshold: 5,
  retainedThreshold: 64,
  failOn: 'metrics',
  failOnRegression: true,
  failOnInconclusive: false,
  maxRounds: 30,
  maxTime: 180,
  scenarios: [
    {
      name: 's',
      url: '/',
      method: 'GET',
      headers: {},
      connections: 4,
      pipelining: 1,
      http2: false,
      grpc: false,
    },
  ],
};

/**
 * One auto-rounds comparison, simulated: pairs of rounds with the given noise (sd of the log of
 * each metric per round) and true factor of head's CPU (throughput falls by the same factor), a
 * look after each pair as measureRounds takes it, each pair 15 s (12 pairs fit the budget).
 */
export function simulate(
  random: () => number,
  factor: number,
  noise = { rps: 0.03, cpu: 0.01 },
  options: { shard?: number; settings?: typeof settings; question?: StopQuestion } = {},
) {
  const run = options.settings ?? settings;
  const normal = () => Math.sqrt(-2 * Math.log(random() || 1e-12)) * Math.cos(2 * Math.PI * random());
  const results: Record<Side, RoundResult[]> = { base: [], head: [] };
  let spent = 0;
  for (let pair = 1; pair <= run.maxRounds; pair++) {
    for (const side of ['base', 'head'] as const) {
      const f = side === 'head' ? factor : 1;
      const machine = Math.exp(noise.rps * normal());
      const cpu = 100 * f * Math.exp(noise.cpu * normal());
      const round = simulatedRound(side, pair, (1000 / f) * machine, cpu, cpu * 0.6);
      results[side].push(options.shard === undefined ? round : { ...round, shard: options.shard });
    }
    const decision = decideAfterPair({
      measurements: results,
      settings: run,
      pairs: pair,
      elapsedMs: pair * 15_000,
      spent,
      ...(options.question ? { question: options.question } : {}),
    });
    if (decision.look) spent += decision.look.alphaShare;
    if (decision.stop)
      return {
        pairs: pair,
        stop: decision.stop,
        outcome: decision.outcome,
        spent,
        results,
        lastShare: decision.look?.alphaShare ?? 1,
      };
  }
  throw new Error('never stopped');
}
