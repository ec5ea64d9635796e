import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cli } from './cli-runner.js';
import { NGINX, type Nginx, startNginx } from './nginx.js';
import { httpServer, tcpServer } from './servers.js';

// nginx is the reference server here: outside CI a machine without it skips these, and says
// why in their name; in CI they run (and fail without nginx).
describe.skipIf(!NGINX && !process.env.CI)(
  `hotpath-load against nginx${NGINX ? '' : ' (nginx is not installed)'}`,
  () => {
    let nginx: Nginx;
    beforeAll(async () => {
      nginx = await startNginx();
    });
    afterAll(async () => {
      await nginx?.stop();
    });

    it('-a 20000 sends exactly 20000 requests: the access log shows 20000 lines', async () => {
      const ran = await cli(['-a', '20000', '-c', '10', '--json', `${nginx.url}/hello`]);
      expect(ran.stderr).toBe('');
      expect(ran.code).toBe(0);
      const result = JSON.parse(ran.stdout);
      expect(result.requests.total).toBe(20000);
      expect(result.statusCodes).toEqual({ '200': 20000 });
      expect(result.errors).toBe(0);
      expect(result.duration).toBeGreaterThan(0);
      expect(result.latency.p50).toBeLessThanOrEqual(result.latency.p99);
      expect(result.latency.p99).toBeLessThanOrEqual(result.latency.max);
      // nginx closes keep-alive connections after 1000 requests: the client reconnected.
      expect(nginx.accessLogLines()).toBe(20000);
    });

    it('pipelines against nginx with exact counts and status codes', async () => {
      const before = nginx.accessLogLines();
      const ran = await cli(['-a', '5000', '-c', '4', '-p', '10', '--json', `${nginx.url}/missing`]);
      const result = JSON.parse(ran.stdout);
      expect(result.statusCodes).toEqual({ '404': 5000 });
      expect(result.non2xx).toBe(5000);
      expect(nginx.accessLogLines() - before).toBe(5000);
    });

    it('splits the load over worker threads (-w) and still counts exactly', async () => {
      const before = nginx.accessLogLines();
      const ran = await cli(['-a', '4000', '-c', '4', '-w', '2', '--json', `${nginx.url}/hello`]);
      const result = JSON.parse(ran.stdout);
      expect(result.workers).toBe(2);
      expect(result.requests.total).toBe(4000);
      expect(nginx.accessLogLines() - before).toBe(4000);
    });

    it('prints an ab-style summary by default', async () => {
      const ran = await cli(['-a', '300', '-c', '3', `${nginx.url}/index.html`]);
      expect(ran.code).toBe(0);
      expect(ran.stdout).toMatch(/Complete requests:\s+300\n/);
      expect(ran.stdout).toMatch(/Requests per second:\s+[\d.]+ \[#\/sec\] \(mean\)/);
      expect(ran.stdout).toMatch(/Status codes:\s+200: 300/);
      expect(ran.stdout).toContain('(longest request)');
      // A run shorter than a second prints no progress line.
      expect(ran.stderr).toBe('');
    });
  },
);

describe('hotpath-load input and lifecycle', () => {
  it.each([
    [['http://127.0.0.1:1/', '-d', '0'], /invalid -d "0": expected a time > 0 such as 10, 10s, 500ms or 2m/],
    [['http://127.0.0.1:1/', '-d', 'abc'], /invalid -d "abc": expected a time > 0/],
    [['http://127.0.0.1:1/', '--duration=-5'], /invalid -d "-5": expected a time > 0/],
    [['http://127.0.0.1:1/', '-d', '-5'], /-d/],
    [['http://127.0.0.1:1/', '-a', '0'], /invalid -a "0"/],
    [['http://127.0.0.1:1/', '-c', '2.5'], /invalid -c "2.5"/],
    [['http://127.0.0.1:1/', '--bogus'], /^hotpath-load: unknown option --bogus \(see --help\)\n$/],
    [['http://127.0.0.1:1/', '-Z'], /^hotpath-load: unknown option -Z \(see --help\)\n$/],
    [
      ['http://127.0.0.1:1/', '-d', '3000000'],
      /^hotpath-load: invalid -d "3000000": expected at most 2147483\.647 seconds \(2\^31-1 ms, the longest a timer can wait\)\n$/,
    ],
    [
      ['http://127.0.0.1:1/', '--warmup', '40000m'],
      /invalid -W "40000m": expected at most 2147483\.647 seconds/,
    ],
    [
      ['http://127.0.0.1:1/', '-d', '10x'],
      /invalid -d "10x": expected a time > 0 such as 10, 10s, 500ms or 2m/,
    ],
    [['http://127.0.0.1:1/', '-d', '0ms'], /invalid -d "0ms"/],
    [['not a url'], /invalid URL "not a url"/],
    [['ftp://example.test/'], /invalid URL "ftp:\/\/example.test\/"/],
    [[], /missing target URL/],
    [
      ['http://127.0.0.1:1/', '-H', 'no-colon'],
      /invalid -H "no-colon": expected "Name: value" or name=value/,
    ],
  ])('rejects %j with one line and exit status 2', async (args, message) => {
    const ran = await cli(args);
    expect(ran.code).toBe(2);
    expect(ran.stdout).toBe('');
    expect(ran.stderr).toMatch(message);
    expect(ran.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(ran.stderr).not.toMatch(/\n\s+at /);
  });

  it('reports an unreachable target in one line with exit status 1', async () => {
    const server = await httpServer((_req, res) => res.end());
    const url = server.url;
    await server.close();
    const ran = await cli(['-a', '10', `${url}/`]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(
      /^hotpath-load: cannot connect to 127\.0\.0\.1:\d+: connection refused \(ECONNREFUSED\)\n$/,
    );
    expect(ran.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('with neither -d nor -a runs the default 10 s and ends by itself', async () => {
    const server = await httpServer((_req, res) => res.end('x'));
    try {
      const ran = await cli(['-c', '1', '-R', '50', '--json', `${server.url}/`]);
      expect(ran.code).toBe(0);
      const result = JSON.parse(ran.stdout);
      expect(result.aborted).toBe(false);
      expect(result.duration).toBeGreaterThanOrEqual(9.9);
      expect(result.duration).toBeLessThan(15);
      expect(result.requests.perSecond.length).toBeGreaterThanOrEqual(9);
    } finally {
      await server.close();
    }
  });

  it.skipIf(!existsSync('/usr/bin/script'))('shows a progress bar when stderr is a terminal', async () => {
    const server = await httpServer((_req, res) => res.end('x'));
    try {
      // script(1) runs the CLI on a pseudo-terminal.
      const command = `${process.execPath} ${CLI} -c 1 -d 2.5 ${server.url}/`;
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn('/usr/bin/script', ['-qfec', command, '/dev/null'], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let text = '';
        child.stdout.on('data', (chunk) => {
          text += chunk;
        });
        child.on('error', reject);
        child.on('close', () => resolve(text));
      });
      expect(out).toMatch(/hotpath-load: \[#+-*\] 1\/2\.5 s {2}\d+ req\/s {2}0 errors {2}ETA 2 s/);
      expect(out).toMatch(/Complete requests:\s+\d+/);
    } finally {
      await server.close();
    }
  });

  it('prints the package version on --version', async () => {
    const ran = await cli(['--version']);
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe(`hotpath-load ${pkg.version}\n`);
  });

  it('takes durations with units: -d 1500ms runs 1.5 s', async () => {
    const server = await httpServer((_req, res) => res.end('x'));
    try {
      const ran = await cli([
        '-c',
        '1',
        '-R',
        '100',
        '-d',
        '1500ms',
        '--warmup',
        '0.2s',
        '--json',
        `${server.url}/`,
      ]);
      expect(ran.code).toBe(0);
      const result = JSON.parse(ran.stdout);
      expect(result.duration).toBeGreaterThanOrEqual(1.45);
      expect(result.duration).toBeLessThan(5);
    } finally {
      await server.close();
    }
  });

  it('exits 1 with the reason when no request completed: all timed out', async () => {
    const server = await tcpServer(() => {});
    try {
      const ran = await cli(['-a', '3', '-c', '3', '-t', '300ms', '--json', `${server.url}/`]);
      expect(ran.code).toBe(1);
      expect(JSON.parse(ran.stdout).errorsByKind).toEqual({ timeout: 3 });
      expect(ran.stderr).toBe('hotpath-load: no request completed: 3 timeouts (no response within 0.3 s)\n');
    } finally {
      await server.close();
    }
  });

  it('exits 1 with the reason when no request completed: the server closes every connection', async () => {
    const server = await tcpServer((socket) => socket.destroy());
    try {
      const ran = await cli(['-a', '20', '-c', '2', `${server.url}/`]);
      expect(ran.code).toBe(1);
      expect(ran.stdout).toMatch(/Complete requests:\s+0\n/);
      expect(ran.stderr).toMatch(
        /^hotpath-load: no request completed: 20 (connections closed before the response \(the server closed the connection before the response was complete\)|connection resets \(.*\))/,
      );
      expect(ran.stderr.trimEnd().split('\n')).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('prints usage on --help', async () => {
    const ran = await cli(['--help']);
    expect(ran.code).toBe(0);
    for (const flag of [
      '-c',
      '-d',
      '-a, --amount',
      '-n, --no-progress',
      '-p',
      '-R',
      '-m',
      '-H',
      '-b',
      '-W, --warmup',
      '-w, --workers',
      '-j, --json',
    ])
      expect(ran.stdout).toContain(`${flag}`);
  });

  it('stops cleanly on Ctrl-C and prints the partial result', async () => {
    // SIGINT goes out one second after the first request reached the server: by then the CLI
    // has installed its handler (it does so before opening any connection), however slow
    // the machine is.
    let firstRequest!: () => void;
    const started = new Promise<void>((resolve) => {
      firstRequest = resolve;
    });
    const server = await httpServer((_req, res) => {
      firstRequest();
      res.end('x');
    });
    try {
      const interrupt = started.then(() => new Promise<void>((resolve) => setTimeout(resolve, 1000)));
      const ran = await cli(['-c', '2', '-d', '60', '--json', `${server.url}/`], {
        interruptWhen: interrupt,
      });
      expect(ran.code).toBe(130);
      const result = JSON.parse(ran.stdout);
      expect(result.aborted).toBe(true);
      expect(result.requests.total).toBeGreaterThan(0);
      expect(result.duration).toBeGreaterThan(0);
      expect(result.duration).toBeLessThan(50);
    } finally {
      await server.close();
    }
  });
});
