import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './cli-runner.js';
import { httpServer, tcpServer } from './servers.js';

/** What the server saw: requests with their method, headers and body, and the sockets. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

describe('hotpath-load follows autocannon letter for letter', () => {
  let server: Awaited<ReturnType<typeof httpServer>>;
  const seen: Seen[] = [];
  const sockets = new Set<unknown>();
  beforeAll(async () => {
    server = await httpServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        sockets.add(req.socket);
        res.end(req.url === '/other' ? 'other' : 'hello');
      });
    });
  });
  afterAll(async () => {
    await server.close();
  });
  const fresh = () => {
    seen.length = 0;
    sockets.clear();
  };
  const json = (stdout: string) => JSON.parse(stdout);

  it('-a N (amount) sends exactly N measured requests', async () => {
    fresh();
    const ran = await cli(['-a', '57', '-c', '3', '-j', `${server.url}/`]);
    expect(ran.code).toBe(0);
    expect(json(ran.stdout).requests.total).toBe(57);
    expect(seen).toHaveLength(57);
  });

  it('-c N opens N connections', async () => {
    fresh();
    const ran = await cli(['-a', '60', '-c', '4', '-j', `${server.url}/`]);
    expect(json(ran.stdout).connections).toBe(4);
    expect(sockets.size).toBe(4);
  });

  it('-p N pipelines N requests per connection', async () => {
    const ran = await cli(['-a', '40', '-c', '1', '-p', '4', '-j', `${server.url}/`]);
    expect(json(ran.stdout).pipelining).toBe(4);
    expect(json(ran.stdout).requests.total).toBe(40);
  });

  it('-d TIME measures for that long', async () => {
    const ran = await cli(['-d', '1', '-c', '1', '-R', '20', '-j', `${server.url}/`]);
    expect(json(ran.stdout).duration).toBeGreaterThanOrEqual(0.95);
  });

  it('-R N is the overall rate (open model)', async () => {
    const ran = await cli(['-d', '1', '-c', '2', '-R', '40', '-j', `${server.url}/`]);
    expect(json(ran.stdout).rate).toBe(40);
  });

  it('-w N runs N worker threads (not a warm-up)', async () => {
    fresh();
    const ran = await cli(['-w', '2', '-c', '2', '-a', '100', '-j', `${server.url}/`]);
    expect(ran.code).toBe(0);
    const result = json(ran.stdout);
    expect(result.workers).toBe(2);
    expect(result.requests.total).toBe(100);
    expect(seen).toHaveLength(100);
  });

  it('-W TIME warms up first: the server sees more requests than were measured', async () => {
    fresh();
    const ran = await cli(['-W', '1', '-a', '50', '-c', '2', `${server.url}/`]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/Complete requests:\s+50\n/);
    expect(seen.length).toBeGreaterThan(50);
    // piped stderr: the warm-up second has its own progress line
    expect(ran.stderr).toMatch(
      /^hotpath-load: warm-up 1\/1 s {2}\d+ req\/s {2}0 errors {2}measuring in 0 s$/m,
    );
  });

  it('-t SEC is the per-request timeout in seconds', async () => {
    const silent = await tcpServer(() => {});
    try {
      const ran = await cli(['-a', '2', '-c', '2', '-t', '0.3', '-j', `${silent.url}/`]);
      expect(ran.code).toBe(1);
      expect(json(ran.stdout).errorsByKind).toEqual({ timeout: 2 });
      expect(ran.stderr).toContain('no response within 0.3 s');
    } finally {
      await silent.close();
    }
  });

  it('-m METHOD and -b BODY set the request', async () => {
    fresh();
    await cli(['-a', '3', '-c', '1', '-m', 'POST', '-b', 'payload', '-j', `${server.url}/`]);
    expect(seen.map((s) => [s.method, s.body])).toEqual([
      ['POST', 'payload'],
      ['POST', 'payload'],
      ['POST', 'payload'],
    ]);
  });

  it('-i FILE (and -b @FILE) read the body from a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hotpath-load-body-'));
    try {
      const file = join(dir, 'body.json');
      writeFileSync(file, '{"a":1}');
      fresh();
      await cli(['-a', '2', '-c', '1', '-m', 'PUT', '-i', file, '-j', `${server.url}/`]);
      await cli(['-a', '2', '-c', '1', '-m', 'PUT', '-b', `@${file}`, '-j', `${server.url}/`]);
      expect(seen.map((s) => s.body)).toEqual(['{"a":1}', '{"a":1}', '{"a":1}', '{"a":1}']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('-H takes both "Name: value" and autocannon\'s name=value', async () => {
    fresh();
    const ran = await cli([
      '-a',
      '2',
      '-c',
      '1',
      '-H',
      'x-token=abc=def',
      '-H',
      'X-Other: a=b',
      '-j',
      `${server.url}/`,
    ]);
    expect(ran.code).toBe(0);
    for (const s of seen) {
      expect(s.headers['x-token']).toBe('abc=def');
      expect(s.headers['x-other']).toBe('a=b');
    }
    expect(seen).toHaveLength(2);
  });

  it('-E TEXT (--expect-body): a body that differs counts as a failed request of kind "body"', async () => {
    const good = await cli(['-a', '20', '-c', '2', '-E', 'hello', '-j', `${server.url}/`]);
    expect(json(good.stdout).errors).toBe(0);
    expect(json(good.stdout).requests.total).toBe(20);
    const bad = await cli(['-a', '20', '-c', '2', '--expect-body', 'hello', '-j', `${server.url}/other`]);
    expect(json(bad.stdout).errorsByKind).toEqual({ body: 20 });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('20 bodies unlike --expect-body');
  });

  it('-B N bails out after N failed requests', async () => {
    const ran = await cli(['-a', '1000', '-c', '1', '-B', '3', '-E', 'x', '-j', `${server.url}/`]);
    const result = json(ran.stdout);
    expect(result.bailedOut).toBe(true);
    expect(result.errors).toBe(3);
    const summary = await cli(['-a', '1000', '-c', '1', '-B', '3', '-E', 'x', `${server.url}/`]);
    expect(summary.stdout).toContain('(bailed out: -B failures reached)');
  });

  it('-S PATH connects to a Unix domain socket; the URL gives Host and path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hotpath-load-sock-'));
    const path = join(dir, 's.sock');
    const hosts: string[] = [];
    const unix: Server = createServer((req, res) => {
      hosts.push(`${req.headers.host} ${req.url}`);
      res.end('unix');
    });
    await new Promise<void>((resolve) => unix.listen(path, resolve));
    try {
      const ran = await cli(['-a', '5', '-c', '1', '-S', path, '-j', 'http://example.test/via-socket']);
      expect(ran.code).toBe(0);
      expect(json(ran.stdout).requests.total).toBe(5);
      expect(hosts).toEqual(Array(5).fill('example.test /via-socket'));
    } finally {
      unix.closeAllConnections();
      await new Promise((resolve) => unix.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('-T TITLE names the run in the summary and the JSON', async () => {
    const text = await cli(['-a', '3', '-c', '1', '-T', 'login route', `${server.url}/`]);
    expect(text.stdout).toMatch(/^Title:\s+login route\n/);
    const ran = await cli(['-a', '3', '-c', '1', '-T', 'login route', '-j', `${server.url}/`]);
    expect(json(ran.stdout).title).toBe('login route');
  });

  it('-j prints JSON and no progress', async () => {
    const ran = await cli(['-d', '1.5', '-c', '1', '-R', '20', '-j', `${server.url}/`]);
    expect(json(ran.stdout).requests.total).toBeGreaterThan(0);
    expect(ran.stderr).toBe('');
  });

  it('-l prints the full latency distribution', async () => {
    const ran = await cli(['-a', '200', '-c', '2', '-l', `${server.url}/`]);
    expect(ran.stdout).toContain('Latency distribution (ms)');
    expect(ran.stdout).toMatch(/Total count\s+=\s+200\]/);
  });

  it('progress goes to a pipe as one line per second; -n (--no-progress) silences it', async () => {
    const piped = await cli(['-d', '2', '-c', '1', '-R', '50', `${server.url}/`]);
    const lines = piped.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^hotpath-load: 1\/2 s {2}\d+ req\/s {2}0 errors {2}ETA 1 s$/);
    expect(lines[1]).toMatch(/^hotpath-load: 2\/2 s {2}\d+ req\/s {2}0 errors {2}ETA 0 s$/);
    const quiet = await cli(['-d', '2', '-c', '1', '-R', '50', '-n', `${server.url}/`]);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).toMatch(/Complete requests:/);
  });

  it('an -a run reports requests done out of the amount, with an ETA', async () => {
    const ran = await cli(['-a', '150', '-c', '1', '-R', '100', `${server.url}/`]);
    expect(ran.code).toBe(0);
    expect(ran.stderr).toMatch(/^hotpath-load: \d+\/150 requests {2}\d+ req\/s {2}0 errors {2}ETA \d+ s$/m);
  });

  it('-v (--version) prints "hotpath-load <version>"; -h prints the usage', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect((await cli(['-v'])).stdout).toBe(`hotpath-load ${pkg.version}\n`);
    expect((await cli(['-h'])).stdout).toContain("The letters are autocannon's");
  });

  it.each([
    [['-c', '-1'], 'invalid -c "-1": expected a whole number of connections >= 1'],
    [['-a', '-5'], 'invalid -a "-5"'],
    [['-d', '-2'], 'invalid -d "-2"'],
    [['-R', '-3'], 'invalid -R "-3": expected requests per second > 0'],
    [['-p', '0'], 'invalid -p "0"'],
    [['-w', '4s'], 'invalid -w "4s": expected a whole number of worker threads >= 1 (-W is the warm-up)'],
    [['-W', 'soon'], 'invalid -W "soon"'],
    [['-t', '-1'], 'invalid -t "-1"'],
    [['-B', '0'], 'invalid -B "0"'],
    [['-B', '-2'], 'invalid -B "-2"'],
    [
      ['-n', '100'],
      '-n takes no value (got "100"): -n is --no-progress, as in autocannon; -a 100 sends 100 requests',
    ],
    [['-H', '=x'], 'invalid -H "=x": expected "Name: value" or name=value'],
    [['-S', ''], 'invalid -S ""'],
    [['-T', ''], 'invalid -T ""'],
    [['-i', '/nonexistent/body'], 'cannot read body file "/nonexistent/body"'],
  ])('%j exits 2 with one line naming the value', async (args, message) => {
    const ran = await cli([...args, 'http://127.0.0.1:1/']);
    expect(ran.code).toBe(2);
    expect(ran.stdout).toBe('');
    expect(ran.stderr).toContain(`hotpath-load: ${message}`);
    expect(ran.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});
