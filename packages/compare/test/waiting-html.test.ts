// report.html's waiting block: the endpoints and functions tables and the waiting flame graphs
// (base, head, differential) from the probe's downstream stacks. Pure on the recorded windows of
// test/downstream-probe.test.ts; then a real comparison whose head awaits in series what base
// awaits together, its report.html drawn in headless Chromium.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compare } from '../src/compare.js';
import { type DownstreamWindow, DownstreamWindowSchema } from '../src/downstream-model.js';
import type { ScenarioRound } from '../src/model.js';
import { flameData, MIN_FRAME_SHARE } from '../src/render/flame-data.js';
import { waitingSection } from '../src/render/html-waiting.js';
import { endpointFrameName, waitingFlameProfile } from '../src/report/waiting-flames.js';
import { findChromium, launchChromium, openReport } from './helpers/chromium.js';

const recorded = JSON.parse(
  readFileSync(new URL('./fixtures/downstream/round-windows.json', import.meta.url), 'utf8'),
) as { windows: unknown[] };
const [pgPerItem, redisPerItem] = recorded.windows.map((w) => DownstreamWindowSchema.parse(w)) as [
  DownstreamWindow,
  DownstreamWindow,
];
/** A round whose one process recorded `window` (what waitingFlameProfile reads of a round). */
const round = (window: DownstreamWindow) =>
  ({ monitors: [{ downstream: window }] }) as unknown as ScenarioRound;

describe('waiting flame profile (pure)', () => {
  it('weights each stack by its waiting per request, the mean over rounds, its leaf the endpoint', () => {
    const profile = waitingFlameProfile([round(pgPerItem), round(redisPerItem)]);
    expect(profile).toBeDefined();
    const p = profile as NonNullable<typeof profile>;
    const perRequest = (w: DownstreamWindow) =>
      w.stacks.reduce((n, s) => n + s.waitingMicros, 0) / w.requests;
    expect(p.totalTicks).toBeCloseTo((perRequest(pgPerItem) + perRequest(redisPerItem)) / 2, 6);
    // every stack ends at an endpoint frame, named as the table names it
    const leaves = new Set(p.stacks.map((s) => p.functions[s.frames.at(-1) as number]?.name));
    const pg = pgPerItem.endpoints.find((e) => e.protocol === 'postgres');
    expect(leaves).toContain(endpointFrameName(pg as NonNullable<typeof pg>));
    expect([...leaves].every((name) => name?.startsWith('→ '))).toBe(true);
    // the function that issued the N+1 queries sits right above PostgreSQL
    const pgStack = p.stacks.find((s) => p.functions[s.frames.at(-1) as number]?.name.includes('postgres'));
    expect(p.functions[pgStack?.frames.at(-2) as number]?.name).toBe('loadItemsOneByOne');
    // self: the endpoints only; the functions' totals hold their stacks
    for (const f of p.functions) if (!f.name.startsWith('→ ')) expect(f.self).toBe(0);
    expect(waitingFlameProfile([round({ ...pgPerItem, stacks: [] })])).toBeUndefined();
  });

  it('renders the tables and the graphs with every name from the server escaped', () => {
    const hostile = '<img src=x onerror=alert(1)>';
    const profile = waitingFlameProfile([round(pgPerItem)]);
    const data = flameData({ base: profile, head: profile }, MIN_FRAME_SHARE, 'micros');
    expect(data.diff).toBeDefined();
    const html = waitingSection(
      { links: undefined } as never,
      {
        downstream: {
          endpoints: [
            {
              endpoint: hostile,
              protocol: 'postgres',
              base: { calls: 1, waitingPerCall: 900, connections: 0, bytes: 100 },
              head: { calls: 10, waitingPerCall: 950, connections: 0, bytes: 900 },
              callsChange: 9,
              callsCi: [8.9, 9.1],
              status: 'changed',
            },
          ],
          functions: [
            {
              name: hostile,
              file: 'app/<b>.js',
              line: 3,
              base: { calls: 0, waiting: 0 },
              head: { calls: 10, waiting: 9500 },
              change: 9500,
              callsChange: 10,
              status: 'new',
            },
          ],
          seriality: { base: 0.35, head: 1 },
          inSeries: { name: hostile, file: 'app/<b>.js', line: 3 },
          pairs: 3,
          rounds: { base: 3, head: 3 },
        },
      } as never,
      { data, at: 7 },
    );
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>');
    expect(html).toContain('1.00 → 10.00');
    expect(html).toContain('head awaits its downstream calls in series');
    expect(html).toContain('data-flames="7"');
    expect(html).toContain('Differential waiting flame graph: base → head');
    // no calls on either side: no block at all
    expect(
      waitingSection({} as never, {} as never, { data: flameData({}, MIN_FRAME_SHARE, 'micros'), at: 0 }),
    ).toBe('');
  });
});

const chromium = findChromium();

describe('report.html of a real run that waits (needs Chromium)', () => {
  let dir = '';
  let service: Server | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-waiting-html-'));
    service = createServer((_req, res) => setTimeout(() => res.end('ok'), 2));
    await new Promise<void>((resolve) => service?.listen(0, '127.0.0.1', resolve));
    const server = (series: boolean) => `const http = require('node:http');
const agent = new http.Agent({ keepAlive: true });
function ask() {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: Number(process.env.SERVICE_PORT), path: '/', agent }, (r) => {
      r.resume();
      r.on('end', resolve);
    }).on('error', reject);
  });
}
async function ${series ? 'loadInSeries' : 'loadTogether'}() {
  ${series ? 'for (let i = 0; i < 3; i++) await ask();' : 'await Promise.all([ask(), ask(), ask()]);'}
}
http.createServer((req, res) => {
  ${series ? 'loadInSeries' : 'loadTogether'}().then(() => res.end('done'), (e) => { res.statusCode = 500; res.end(String(e)); });
}).listen(Number(process.env.PORT), '127.0.0.1');
`;
    writeFileSync(join(dir, 'base.cjs'), server(false));
    writeFileSync(join(dir, 'head.cjs'), server(true));
  });
  afterAll(async () => {
    await new Promise((resolve) => (service ? service.close(resolve) : resolve(undefined)));
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!chromium)(
    'draws base, head and differential waiting graphs, with no console error',
    async () => {
      const address = service?.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const out = join(dir, 'out');
      const report = await compare({
        baseStart: `SERVICE_PORT=${port} node base.cjs`,
        headStart: `SERVICE_PORT=${port} node head.cjs`,
        cwd: dir,
        url: '/',
        rounds: 2,
        duration: 1,
        warmup: 0.3,
        connections: 4,
        profiler: 'none',
        memory: 'off',
        metrics: ['waitingPerRequest'],
        out,
      });
      const scenario = report.scenarios[0];
      expect(scenario?.waitingProfiles?.head?.totalTicks).toBeGreaterThan(0);
      expect(scenario?.downstream?.inSeries?.name).toBe('loadInSeries');
      const json = readFileSync(join(out, 'report.json'), 'utf8');
      expect(json).not.toContain('waitingProfiles');
      const browser = await launchChromium(chromium as string);
      try {
        const { page, errors } = await openReport(browser, join(out, 'report.html'));
        const graphs = await page.evaluate(() =>
          [...document.querySelectorAll<HTMLElement>('[data-graph]')].map((g) => ({
            graph: g.dataset.graph,
            titles: [...g.querySelectorAll('title')].map((t) => t.textContent).join('\n'),
          })),
        );
        expect(errors).toEqual([]);
        // profiler none: no CPU graphs; memory off: no allocation graphs; the waiting ones
        expect(graphs.map((g) => g.graph)).toEqual(['diff', 'head', 'base']);
        expect(graphs[1]?.titles).toMatch(
          /^loadInSeries .*head\.cjs:\d+:\d+: [\d.]+ (µs|ms) waited per request/m,
        );
        expect(graphs[1]?.titles).toMatch(/^→ http 127\.0\.0\.1:\d+: /m);
        expect(graphs[0]?.titles).toMatch(/; self vs base: [+−±][\d.]+ (µs|ms) per request$/m);
        await page.close();
      } finally {
        await browser.close();
      }
    },
    120_000,
  );
});
