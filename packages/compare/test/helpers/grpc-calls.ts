import { join } from 'node:path';
import { expect } from 'vitest';
import { compare } from '../../src/index.js';
import type { ScenarioConfig } from '../../src/settings/schema.js';

/**
 * Two short rounds of `start` on both sides with `scenarios` (gRPC calls): every round made more
 * than 20 calls and none failed (a server that checks what it decoded fails a call it did not
 * get as sent).
 */
export async function expectCallsAnswered(
  dir: string,
  start: string,
  scenarios: ScenarioConfig[],
): Promise<void> {
  const report = await compare({
    baseStart: start,
    headStart: start,
    cwd: dir,
    scenarios,
    rounds: 2,
    duration: 0.5,
    warmup: 0.2,
    connections: 2,
    profiler: 'none',
    memory: 'off',
    out: join(dir, 'out'),
  });
  for (const round of report.scenarios[0]?.rounds ?? []) {
    expect(round.requests).toBeGreaterThan(20);
    expect(round.errors + round.non2xx).toBe(0);
  }
}
