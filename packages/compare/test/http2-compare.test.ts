// hotpath compare over HTTP/2: the scenario's `http2` setting makes every load run speak h2 (h2c
// here) to a node:http2 server that does not speak HTTP/1.1 at all; a head doing five times the
// work per request regresses, and the report says the load was HTTP/2.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compare, render } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-h2-'));
cpSync(new URL('./fixtures/h2-work-server.cjs', import.meta.url), join(dir, 'server.cjs'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('hotpath compare over HTTP/2', () => {
  it('regresses a head with five times the work per request, measured over h2c', async () => {
    const report = await compare({
      baseStart: 'WORK_ITERATIONS=100 node server.cjs',
      headStart: 'WORK_ITERATIONS=500 node server.cjs',
      cwd: dir,
      url: '/',
      http2: true,
      // CPU per request the one test of the family (a CI run with nine verdict metrics over 3
      // pairs read +74 % as inconclusive: t at 2 degrees of freedom and alpha / 9 is about 10)
      metrics: ['cpuPerRequest'],
      rounds: 4,
      duration: 1,
      warmup: 0.5,
      connections: 4,
      profiler: 'none',
      memory: 'off',
      out: join(dir, 'out'),
    });
    const [scenario] = report.scenarios;
    // a server that speaks only HTTP/2 answered every request
    for (const round of scenario?.rounds ?? []) {
      expect(round.requests).toBeGreaterThan(50);
      expect(round.errors + round.non2xx).toBe(0);
    }
    const cpu = scenario?.metrics.find((m) => m.metric === 'cpuPerRequest');
    expect(cpu?.outcome, JSON.stringify(cpu)).toBe('regressed');
    // five times the hashing plus the same HTTP/2 handling (three times read +74 % here)
    expect(cpu?.change, JSON.stringify(cpu)).toBeGreaterThan(0.5);
    expect(report.settings.scenarios[0]?.http2).toBe(true);
    expect(render(report).terminal).toContain('HTTP/2 connections');
  });
});
