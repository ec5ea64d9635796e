import type { AllocationProfile } from '../../src/model.js';

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
