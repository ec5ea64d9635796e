// hotpath compare over gRPC: a scenario's `grpc` makes every load run unary calls to the method its
// url names, with its body (base64) as the message, on a real @grpc/grpc-js server; a head doing
// five times the work per call regresses. The settings refuse what cannot make a call.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compare, render } from '../src/index.js';
import { runLoad } from '../src/measure/load.js';
import { resolveSettings } from '../src/settings/schema.js';

const FIXTURES = new URL('./fixtures/', import.meta.url).pathname;
const METHOD = '/hotpath.test.Work/Hash';
const message = (text: string) => Buffer.from(text).toString('base64');
const dir = mkdtempSync(join(tmpdir(), 'hotpath-grpc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('gRPC scenarios: the settings', () => {
  const settings = (config: Record<string, unknown>) => () =>
    resolveSettings({ config: { start: 'node server.cjs', ...config }, configName: 'hotpath.config.json' });

  it('take a method url and a base64 message', () => {
    const s = settings({ url: METHOD, grpc: true, body: message('hotpath') })();
    expect(s.scenarios[0]).toMatchObject({ grpc: true, url: METHOD, body: message('hotpath') });
    // named for what it is, not for the POST it is on the wire (nor the GET default)
    expect(s.scenarios[0]?.name).toBe(`gRPC ${METHOD}`);
    expect(settings({ url: METHOD, grpc: true })().scenarios[0]?.grpc).toBe(true);
  });

  it('refuse a url that is no method, a body that is no base64, a requests list — naming each', () => {
    expect(settings({ url: '/', grpc: true })).toThrow(
      'invalid "url" of the gRPC scenario "gRPC /" in hotpath.config.json: expected a gRPC method path like /package.Service/Method, got "/"',
    );
    expect(settings({ url: METHOD, grpc: true, body: 'not base64!' })).toThrow(
      /invalid "body" of the gRPC scenario .*: expected the request message as base64 \(its encoded protobuf bytes\), got "not base64!"/,
    );
    expect(
      settings({ scenarios: [{ name: 'calls', url: METHOD, grpc: true, requests: [{ path: '/a' }] }] }),
    ).toThrow(/invalid "requests" of the gRPC scenario "calls"/);
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

describe('gRPC scenarios: real calls', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill();
  });

  it('counts a non-zero grpc-status as an error', async () => {
    const port = await freePort();
    child = spawn(process.execPath, ['grpc-work-server.cjs'], {
      cwd: FIXTURES,
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => child?.stdout?.once('data', () => resolve()));
    const load = (text: string) =>
      runLoad({
        url: `http://127.0.0.1:${port}${METHOD}`,
        grpc: true,
        body: message(text),
        connections: 2,
        duration: 0.3,
        pipelining: 1,
        method: 'GET',
        headers: {},
      });
    const ok = await load('hotpath');
    expect(ok.requests.total).toBeGreaterThan(10);
    expect(ok.errors + ok.non2xx).toBe(0);
    const failing = await load('name=fail');
    expect(failing.requests.total + failing.errors).toBeGreaterThan(10);
    expect(failing.errors + failing.non2xx).toBeGreaterThan(0);
    child.kill();
  });

  it('regresses a head with five times the work per call', async () => {
    const report = await compare({
      baseStart: 'WORK_ITERATIONS=100 node grpc-work-server.cjs',
      headStart: 'WORK_ITERATIONS=500 node grpc-work-server.cjs',
      cwd: FIXTURES,
      url: METHOD,
      grpc: true,
      body: message('hotpath'),
      // CPU per request the one test of the family, as in http2-compare.test.ts
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
    for (const round of scenario?.rounds ?? []) {
      expect(round.requests).toBeGreaterThan(50);
      expect(round.errors + round.non2xx).toBe(0);
    }
    const cpu = scenario?.metrics.find((m) => m.metric === 'cpuPerRequest');
    expect(cpu?.outcome, JSON.stringify(cpu)).toBe('regressed');
    expect(cpu?.change, JSON.stringify(cpu)).toBeGreaterThan(0.5);
    expect(render(report).terminal).toContain('gRPC connections');
  });
});
