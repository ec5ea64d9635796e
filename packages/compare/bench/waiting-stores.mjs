// The detection bench's waiting stories (bench/detection.mjs --change nplus1|serial|keepalive|
// cache-miss): a JSON route whose handler calls a downstream, and the downstream itself, started
// here and stopped by the bench. --store picks it:
//   http      a local HTTP service (a child process answering every request after 3 ms)
//   postgres  a real PostgreSQL (scripts/stores.mjs: the system's binaries, a cluster of our own)
//             through node-postgres, a pool of 10 (its default)
//   redis     a real Redis (scripts/stores.mjs) through ioredis, one connection
// The stories: nplus1 (base asks once for 10 items, head once per item), serial (base awaits 3
// calls together, head one after another: on PostgreSQL each query sleeps 3 ms, as the service
// answers; Redis answers at once and ioredis writes 3 commands of one tick together), keepalive
// and cache-miss (http only).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { startPostgres, startRedis } from '../../../scripts/stores.mjs';

export const STORES = ['http', 'postgres', 'redis'];
/** The stories each store has. */
export const STORE_CHANGES = {
  http: ['nplus1', 'serial', 'keepalive', 'cache-miss'],
  postgres: ['nplus1', 'serial'],
  redis: ['nplus1', 'serial'],
};

// node-postgres and ioredis are compare's devDependencies: the servers, written into a temp
// repository outside the workspace, require them by absolute path (node_modules in the path, so
// the probe reads their frames as a library's and names the route's own functions).
const requireHere = createRequire(import.meta.url);

// The service the http stories call: every answer after 3 ms, from a child process.
const serviceSource = `require('node:http').createServer((req, res) => {
  setTimeout(() => {
    const n = /n=(\\d+)/.exec(req.url)?.[1];
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(n ? Array.from({ length: Number(n) }, (_, i) => ({ id: i + 1 })) : { id: 1 }));
  }, 3);
}).listen(0, '127.0.0.1', function () { process.stdout.write(String(this.address().port) + '\\n'); });`;

async function startService() {
  const child = spawn(process.execPath, ['-e', serviceSource], { stdio: ['ignore', 'pipe', 'inherit'] });
  process.once('exit', () => child.kill('SIGKILL'));
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim())));
    child.once('exit', () => reject(new Error('the local service exited')));
  });
  return { port, stop: async () => child.kill('SIGKILL') };
}

/** Redis holds what the stories read: item:1…item:10 and part:a…part:c. */
async function seedRedis(url) {
  const { Redis } = requireHere('ioredis');
  const redis = new Redis(url);
  try {
    for (let id = 1; id <= 10; id++) await redis.set(`item:${id}`, JSON.stringify({ id }));
    for (const part of ['a', 'b', 'c']) await redis.set(`part:${part}`, JSON.stringify({ part }));
  } finally {
    redis.disconnect();
  }
}

/** Starts `store`'s downstream. Resolves to { store, port?, url?, stop() }. */
export async function startDownstream(store) {
  if (store === 'http') return { store, ...(await startService()) };
  if (store === 'postgres') {
    const pg = await startPostgres();
    return { store, url: pg.url, stop: pg.stop };
  }
  const redis = await startRedis();
  await seedRedis(redis.url);
  return { store, url: redis.url, stop: redis.stop };
}

const TAIL = `http.createServer(async (req, res) => {
  try {
    const items = await loadItems();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ items }));
  } catch (err) {
    res.statusCode = 500;
    res.end(String(err));
  }
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

function httpBody(change, head, port) {
  const ask = `const agent = new http.Agent({ keepAlive: ${!(head && change === 'keepalive')}, maxSockets: 64 });
function ask(path) {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port: ${port}, path, agent }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve(body));
    });
    request.on('error', reject);
  });
}
const cache = new Map();
let served = 0;`;
  const load =
    change === 'nplus1'
      ? head
        ? "const items = [];\n  for (let id = 1; id <= 10; id++) items.push(JSON.parse(await ask('/item?id=' + id)));\n  return items;"
        : "return JSON.parse(await ask('/items?n=10'));"
      : change === 'serial'
        ? head
          ? "const out = [];\n  for (const part of ['a', 'b', 'c']) out.push(await ask('/part?p=' + part));\n  return out;"
          : "return Promise.all(['a', 'b', 'c'].map((part) => ask('/part?p=' + part)));"
        : change === 'cache-miss'
          ? `const key = served++ % 20;\n  const hit = ${head ? 'undefined' : 'served % 20 === 0 ? undefined : cache.get(key)'};\n  if (hit) return hit;\n  const value = JSON.parse(await ask('/items?n=10'));\n  cache.set(key, value);\n  return value;`
          : "return JSON.parse(await ask('/items?n=10'));";
  return `${ask}\nasync function loadItems() {\n  ${load}\n}`;
}

function postgresBody(change, head, url) {
  const client = `const pg = require(${JSON.stringify(requireHere.resolve('pg'))});
const pool = new pg.Pool({ connectionString: ${JSON.stringify(url)}, max: 10 });
const SLOW = 'select pg_sleep(0.003), $1::text as part';`;
  const load =
    change === 'nplus1'
      ? head
        ? "const items = [];\n  for (let id = 1; id <= 10; id++) items.push((await pool.query('select $1::int as id', [id])).rows[0]);\n  return items;"
        : "return (await pool.query('select g as id from generate_series(1, 10) g')).rows;"
      : head
        ? "const out = [];\n  for (const part of ['a', 'b', 'c']) out.push((await pool.query(SLOW, [part])).rows[0].part);\n  return out;"
        : "return (await Promise.all(['a', 'b', 'c'].map((part) => pool.query(SLOW, [part])))).map((r) => r.rows[0].part);";
  return `${client}\nasync function loadItems() {\n  ${load}\n}`;
}

function redisBody(change, head, url) {
  const client = `const { Redis } = require(${JSON.stringify(requireHere.resolve('ioredis'))});
const redis = new Redis(${JSON.stringify(url)});
const KEYS = Array.from({ length: 10 }, (_, i) => 'item:' + (i + 1));`;
  const load =
    change === 'nplus1'
      ? head
        ? 'const items = [];\n  for (const key of KEYS) items.push(JSON.parse(await redis.get(key)));\n  return items;'
        : 'return (await redis.mget(KEYS)).map((v) => JSON.parse(v));'
      : head
        ? "const out = [];\n  for (const part of ['a', 'b', 'c']) out.push(await redis.get('part:' + part));\n  return out;"
        : "return Promise.all(['a', 'b', 'c'].map((part) => redis.get('part:' + part)));";
  return `${client}\nasync function loadItems() {\n  ${load}\n}`;
}

/** The story's server source for one side (`head` true: the changed side). */
export function waitingServer(downstream, change, head) {
  const body =
    downstream.store === 'http'
      ? httpBody(change, head, downstream.port)
      : downstream.store === 'postgres'
        ? postgresBody(change, head, downstream.url)
        : redisBody(change, head, downstream.url);
  return `// a JSON route that calls ${downstream.store === 'http' ? 'a service' : downstream.store}${head ? `: head's ${change}` : ''}
const http = require('node:http');
${body}
${TAIL}`;
}
