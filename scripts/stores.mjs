// Real PostgreSQL and Redis servers of our own, each on a free port of 127.0.0.1 in a temporary
// directory, for the tests (packages/compare/test/helpers/stores.ts) and `pnpm demo waiting`.
// PostgreSQL's binaries come from PATH or /usr/lib/postgresql/<version>/bin (where Debian's
// package puts them); as root, initdb refuses to run, so the cluster is made and run by the
// `postgres` system user (runuser) in a directory it owns. Each start returns a `stop()` that
// ends the server and removes its directory; a failed start stops what it started.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './lib/checks.mjs';

/** A free TCP port on 127.0.0.1 (the OS's choice; closed again before it is used). */
export { freePort };

function onPath(command) {
  for (const dir of (process.env.PATH ?? '').split(':'))
    if (dir && existsSync(join(dir, command))) return dir;
  return undefined;
}

/** The directory holding initdb and postgres: PATH first, then the newest /usr/lib/postgresql/<v>/bin. */
export function postgresBin() {
  const fromPath = onPath('initdb');
  if (fromPath && existsSync(join(fromPath, 'postgres'))) return fromPath;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], 'bin') : undefined;
}

/** redis-server's path, when it is installed. */
export function redisBin() {
  const dir = onPath('redis-server');
  return dir ? join(dir, 'redis-server') : undefined;
}

/** Why PostgreSQL cannot be started here, or undefined when it can. */
export function postgresMissing() {
  if (!postgresBin())
    return 'no PostgreSQL binaries (initdb, postgres) on PATH or in /usr/lib/postgresql/*/bin';
  if (process.getuid?.() === 0 && !userExists('postgres'))
    return 'running as root without a postgres system user';
  return undefined;
}

/** Why Redis cannot be started here, or undefined when it can. */
export function redisMissing() {
  return redisBin() ? undefined : 'no redis-server on PATH';
}

function userExists(name) {
  return spawnSync('id', ['-u', name], { stdio: 'ignore' }).status === 0;
}

function userIds(name) {
  const uid = Number(spawnSync('id', ['-u', name], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', name], { encoding: 'utf8' }).stdout.trim());
  return { uid, gid };
}

/** Runs `command args` as the postgres user when we are root, else as ourselves. */
function asOwner(command, args) {
  if (process.getuid?.() !== 0) return { command, args };
  return { command: 'runuser', args: ['-u', 'postgres', '--', command, ...args] };
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Ends a child and waits for it (SIGTERM, then SIGKILL after `graceMs`). */
async function end(child, graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Waits until `ready()` is true or the child exits or `timeoutMs` passes. */
async function until(child, ready, what, output, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}): ${output().slice(-2000)}`);
    if (await ready()) return;
    await sleep(100);
  }
  throw new Error(`${what} was not ready within ${timeoutMs} ms: ${output().slice(-2000)}`);
}

function spawnLogged(command, args, options = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  return { child, output: () => output };
}

/**
 * Starts a PostgreSQL server of our own: `initdb` into a temporary directory (trust
 * authentication, user `postgres`), `postgres` on a free port of 127.0.0.1 with its Unix socket
 * in that directory. Resolves to { host, port, user, database, socketDir, url, stop() }.
 */
export async function startPostgres() {
  const missing = postgresMissing();
  if (missing) throw new Error(`cannot start PostgreSQL: ${missing}`);
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-pg-'));
  const data = join(dir, 'data');
  let child;
  const stop = async () => {
    if (child) await end(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (process.getuid?.() === 0) {
      const { uid, gid } = userIds('postgres');
      chownSync(dir, uid, gid);
    }
    chmodSync(dir, 0o700);
    const init = asOwner(join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '--no-sync',
      '--encoding=UTF8',
      '--locale=C',
    ]);
    const made = spawnSync(init.command, init.args, { encoding: 'utf8', cwd: dir });
    if (made.status !== 0) throw new Error(`initdb failed (${made.status}): ${made.stderr || made.stdout}`);
    const port = await freePort();
    const run = asOwner(join(bin, 'postgres'), [
      '-D',
      data,
      '-p',
      String(port),
      '-h',
      '127.0.0.1',
      '-k',
      dir,
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=50',
    ]);
    const started = spawnLogged(run.command, run.args, { cwd: dir });
    child = started.child;
    const isReady = join(bin, 'pg_isready');
    await until(
      child,
      async () =>
        existsSync(isReady)
          ? spawnSync(isReady, ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres'], { stdio: 'ignore' })
              .status === 0
          : /ready to accept connections/.test(started.output()),
      'postgres',
      started.output,
    );
    return {
      host: '127.0.0.1',
      port,
      user: 'postgres',
      database: 'postgres',
      socketDir: dir,
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Starts a Redis server of our own on a free port of 127.0.0.1, without persistence. Resolves to
 * { host, port, url, stop() }.
 */
export async function startRedis() {
  const bin = redisBin();
  if (!bin) throw new Error(`cannot start Redis: ${redisMissing()}`);
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-redis-'));
  const port = await freePort();
  const started = spawnLogged(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { cwd: dir },
  );
  const child = started.child;
  const stop = async () => {
    await end(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until(
      child,
      async () => /Ready to accept connections/i.test(started.output()),
      'redis-server',
      started.output,
    );
    return { host: '127.0.0.1', port, url: `redis://127.0.0.1:${port}`, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
