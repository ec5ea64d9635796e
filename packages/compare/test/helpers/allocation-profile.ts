import type { AllocationProfile, ScenarioRound } from '../../src/model.js';

/** The load of a one-second window of 1 000 requests, all answered 200 in 1 ms. */
export function thousandRequests(): ScenarioRound['load'] {
  return {
    duration: 1,
    requests: { total: 1000, mean: 1000, perSecond: [1000] },
    latency: { mean: 1, p50: 1, p90: 1, p99: 1, max: 1 },
    statusCodes: { '200': 1000 },
    non2xx: 0,
    errors: 0,
    errorsByKind: {},
  };
}

/** A sampled allocation profile of the given functions' bytes (one stack each, under `main`). */
export function allocationProfile(bytes: Record<string, number>, file = 'src/app.js'): AllocationProfile {
  const names = Object.keys(bytes);
  const functions = [
    ...names.map((name, i) => ({ name, file, line: i + 10, column: 3, selfBytes: bytes[name] ?? 0 })),
    { name: 'main', file, line: 1, column: 1, selfBytes: 0 },
  ];
  return {
    samplingInterval: 32_768,
    sampledBytes: functions.reduce((s, f) => s + f.selfBytes, 0),
    functions,
    stacks: names.map((_, i) => ({ frames: [names.length, i], bytes: functions[i]?.selfBytes ?? 0 })),
  };
}
