// `pnpm demo [express|restify|nodecached|waiting] [extra hotpath flags]`: a real base-vs-head comparison
// on an example with `hotpath compare`. Without the CLI built, it runs the engine slice that
// predates it: the PBKDF2 story with two real servers, real load and a CPU profile of the head.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseCpuProfile } from '@hotpath/tick-parser';
import { hotpathCli } from '../examples/test-support/hotpath-cli.js';
import { postgresMissing, redisMissing, startPostgres, startRedis } from './stores.mjs';

const root = new URL('..', import.meta.url).pathname;
const cli = hotpathCli();
// The bin is committed; the CLI behind it exists once the package is built.
const built = cli && existsSync(join(dirname(cli), '..', 'dist'));

/** The workspace's v8-profiler-next (built for this Node by pnpm install), when it loads. */
function v8ProfilerPath() {
  try {
    const path = createRequire(join(root, 'packages/tick-parser/package.json')).resolve('v8-profiler-next');
    return dirname(path);
  } catch {
    return undefined;
  }
}

/** The three seed stories: base is the slow first version, head is the fix. */
const demos = {
  express: [
    {
      cwd: 'examples/express-auth',
      base: 'HASH_MODE=sync node server.js',
      head: 'HASH_MODE=async node server.js',
      args: ['--url', '/auth?username=demo&password=secret', '--connections', '20'],
    },
  ],
  restify: [
    {
      title: 'the slow ETag middleware vs the cached one',
      cwd: 'examples/restify-etag',
      base: 'ETAG_MODE=slow node server.js',
      head: 'ETAG_MODE=fast node server.js',
      args: ['--url', '/seed/v1', '--connections', '50'],
    },
    {
      title: 'the slow server under 100 connections, without and with overload-guard (503 + Retry-After)',
      cwd: 'examples/restify-etag',
      base: 'ETAG_MODE=slow node server.js',
      head: 'ETAG_MODE=slow GUARD=1 node server.js',
      args: ['--url', '/seed/v1', '--connections', '100'],
    },
  ],
  nodecached: [
    {
      title: "the seed's naive nodecached (strings, Nagle on) vs memcache-proto",
      cwd: 'examples/nodecached',
      base: 'IMPL=naive node server.js',
      head: 'IMPL=proto node server.js',
      args: ['--url', 'memcache://127.0.0.1:$PORT', '--connections', '50'],
    },
    {
      title: 'memcache-proto vs the real memcached (-t 1)',
      when: () => spawnSync('memcached', ['-h'], { stdio: 'ignore' }).status === 0,
      cwd: 'examples/nodecached',
      base: 'IMPL=proto node server.js',
      head: 'memcached -u nobody -l 127.0.0.1 -p $PORT -t 1 -U 0',
      args: ['--url', 'memcache://127.0.0.1:$PORT', '--connections', '50'],
    },
  ],
};

/**
 * The waiting stories' downstreams: a PostgreSQL and a Redis of their own (scripts/stores.mjs),
 * seeded by examples/orders-db/seed.js. Resolves to the servers' environment (as a command
 * prefix) and a stop().
 */
async function ordersStores() {
  const missing = postgresMissing() ?? redisMissing();
  if (missing) throw new Error(`pnpm demo waiting needs PostgreSQL and Redis: ${missing}`);
  const postgres = await startPostgres();
  let redis;
  try {
    redis = await startRedis();
    const env = { ...process.env, PG_URL: postgres.url, REDIS_URL: redis.url };
    const seeded = spawnSync(process.execPath, ['seed.js'], {
      cwd: join(root, 'examples/orders-db'),
      env,
      stdio: 'inherit',
    });
    if (seeded.status !== 0) throw new Error('examples/orders-db/seed.js failed');
  } catch (err) {
    await Promise.allSettled([postgres.stop(), redis?.stop()]);
    throw err;
  }
  return {
    prefix: `PG_URL=${postgres.url} REDIS_URL=${redis.url}`,
    stop: () => Promise.allSettled([postgres.stop(), redis.stop()]),
  };
}

demos.waiting = [
  {
    title: 'the orders API: one query for the items vs one per order (N+1), on PostgreSQL',
    setup: ordersStores,
    cwd: 'examples/orders-db',
    base: (env) => `${env.prefix} ORDERS_QUERY=join node server.js`,
    head: (env) => `${env.prefix} ORDERS_QUERY=per-item node server.js`,
    args: ['--url', '/customers/7/orders', '--connections', '10'],
  },
  {
    title: 'the customer summary: three reads awaited together vs in series (PostgreSQL and Redis)',
    setup: ordersStores,
    cwd: 'examples/orders-db',
    base: (env) => `${env.prefix} SUMMARY_AWAIT=together node server.js`,
    head: (env) => `${env.prefix} SUMMARY_AWAIT=series node server.js`,
    args: ['--url', '/customers/7/summary', '--connections', '10'],
  },
];

const name = process.argv[2] ?? 'express';
const comparisons = demos[name];
if (!comparisons) {
  console.error(`unknown demo ${JSON.stringify(name)}: expected one of ${Object.keys(demos).join(', ')}`);
  process.exit(2);
}
if (built) {
  const profiler = v8ProfilerPath();
  const env = profiler ? { ...process.env, HOTPATH_V8_PROFILER_PATH: profiler } : process.env;
  let status = 0;
  for (const [index, demo] of comparisons.entries()) {
    if (demo.when && !demo.when()) continue;
    if (demo.title) console.log(`\n== ${demo.title}\n`);
    const out = join('.hotpath', `demo-${name}${index ? `-${index + 1}` : ''}`);
    const prepared = demo.setup ? await demo.setup() : undefined;
    const base = typeof demo.base === 'function' ? demo.base(prepared) : demo.base;
    const head = typeof demo.head === 'function' ? demo.head(prepared) : demo.head;
    const args = [cli, 'compare', '--cwd', demo.cwd, '--base-start', base, '--head-start', head];
    // The product's own defaults otherwise: rounds auto (pairs until the answer is clear, at
    // most the 3-minute budget), 5 s windows in 0.5 s slices, CPU placement.
    args.push(...demo.args, '--out', out);
    args.push(...process.argv.slice(3));
    try {
      status ||= spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root, env }).status ?? 1;
    } finally {
      await prepared?.stop();
    }
  }
  process.exit(status);
} else {
  await fallbackDemo();
}

async function fallbackDemo() {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-demo-'));
  const server = (sync) => `
    const crypto = require('node:crypto');
    process.on('SIGINT', () => process.exit(0));
    require('node:http').createServer((req, res) => {
      const done = (err, key) => res.end(key.toString('hex'));
      ${sync ? "done(null, crypto.pbkdf2Sync('secret', 'salt', 10000, 64, 'sha512'));" : "crypto.pbkdf2('secret', 'salt', 10000, 64, 'sha512', done);"}
    }).listen(0, '127.0.0.1', function () { process.send(this.address().port); });`;
  const measure = async (label, sync) => {
    const file = join(dir, `${label}.cjs`);
    writeFileSync(file, server(sync));
    const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', join(dir, label), file], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const port = await new Promise((resolve) => child.once('message', resolve));
    let done = 0;
    const end = Date.now() + 5000;
    const worker = () =>
      new Promise((resolve) => {
        const next = () => {
          if (Date.now() >= end) return resolve();
          request({ port, host: '127.0.0.1', path: '/auth' }, (res) => {
            res.resume();
            res.on('end', () => {
              done++;
              next();
            });
          }).end();
        };
        next();
      });
    await Promise.all(Array.from({ length: 8 }, worker));
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
    const profiles = readdirSync(join(dir, label));
    const profile = parseCpuProfile(readFileSync(join(dir, label, profiles[0]), 'utf8'));
    return { label, rps: done / 5, profile };
  };
  console.log('hotpath demo (engine slice): pbkdf2Sync (base) vs pbkdf2 (head), 8 connections, 5 s each\n');
  const base = await measure('base', true);
  const head = await measure('head', false);
  console.log(
    `req/s   base ${base.rps.toFixed(1)}   head ${head.rps.toFixed(1)}   change ${(((head.rps - base.rps) / base.rps) * 100).toFixed(1)} %`,
  );
  console.log('\nhottest functions in base (self %):');
  for (const f of base.profile.functions.slice(0, 5)) {
    console.log(
      `  ${((f.self / base.profile.totalTicks) * 100).toFixed(1).padStart(5)} %  ${f.name}  ${f.file}:${f.line}`,
    );
  }
}
