// What the repository's check scripts (pack-check, examples-check) share: a report of named
// checks, commands run with a timeout, free loopback ports, waiting for a port, a raw memcache
// exchange, and the list of this workspace's public packages.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';

/** Prints one line per check (the last lines of a failure's detail under it) and counts them. */
export function createReport() {
  const report = {
    ok: 0,
    failed: [],
    pass(what) {
      report.ok++;
      console.log(`  ok    ${what}`);
    },
    fail(what, detail = '') {
      report.failed.push(what);
      console.log(
        `  FAIL  ${what}${detail ? `\n        ${detail.trim().split('\n').slice(-15).join('\n        ')}` : ''}`,
      );
    },
    check(condition, what, detail) {
      if (condition) report.pass(what);
      else report.fail(what, detail);
      return condition;
    },
  };
  return report;
}

/**
 * Runs a command; resolves { code, stdout, stderr } (code null when it timed out or could not
 * start, with the reason appended to stderr). `children` tracks it while it runs.
 */
export function run(file, args, { cwd, timeout = 60_000, env, children } = {}) {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      { cwd, timeout, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        children?.delete(child);
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr: error && code === null ? `${stderr}\n${error.message}` : stderr });
      },
    );
    children?.add(child);
  });
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Connects until the port accepts (true), the time is up or `alive()` turns false (false). */
export async function waitForPort(port, ms, alive = () => true) {
  const end = Date.now() + ms;
  while (Date.now() < end && alive()) {
    const open = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => resolve(socket.end() && true));
      socket.once('error', () => resolve(false));
    });
    if (open) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** Sends raw memcache text and reads until the reply ends with `until` (or 5 s). */
export function memcacheExchange(port, text, until) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const timer = setTimeout(() => socket.destroy(), 5000);
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.endsWith(until)) socket.end();
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(reply);
    });
    socket.on('error', () => {});
    socket.write(text);
  });
}

/** packages/* whose package.json is not private: { dir, manifest }. */
export function publicPackages(root) {
  return readdirSync(join(root, 'packages'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, 'packages', entry.name, 'package.json')))
    .map((entry) => {
      const dir = join(root, 'packages', entry.name);
      return { dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) };
    })
    .filter((pkg) => pkg.manifest.private !== true);
}
