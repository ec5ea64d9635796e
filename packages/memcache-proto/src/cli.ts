#!/usr/bin/env node
import { spawn } from 'node:child_process';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type CliAction, parseCliArgs, USAGE } from './cli-options.js';
import { HotpathMcError } from './errors.js';
import { createServer, SERVER_IDENTITY, SERVER_VERSION } from './server.js';

/** Set in the environment of the background process `-d` starts (it then serves, not forks). */
const DAEMON_CHILD = 'HOTPATH_MEMCACHED_DAEMON_CHILD';

type ServeAction = Extract<CliAction, { kind: 'serve' }>;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const action = parseCliArgs(argv);
  if (action.kind === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (action.kind === 'version') {
    // memcached's shape (`memcached <version>`), for scripts that parse `memcached -V`; the
    // version says which memcached this speaks and, as build metadata, which hotpath it is
    process.stdout.write(`memcached ${SERVER_VERSION}+${SERVER_IDENTITY.replace(' ', '.')}\n`);
    return;
  }
  if (action.kind === 'license') {
    process.stdout.write(readFileSync(new URL('../LICENSE', import.meta.url), 'utf8'));
    return;
  }
  if (action.process.daemon && process.env[DAEMON_CHILD] !== '1') {
    await daemonize(argv);
    return;
  }
  await serve(action);
}

/**
 * `-d`: starts this command again as a background process in a session of its own, waits until it
 * listens (or fails), reports that, and exits, leaving it running: what an init script or a
 * systemd unit of Type=forking expects of `memcached -d`.
 */
async function daemonize(argv: string[]): Promise<void> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...argv], {
    detached: true,
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    env: { ...process.env, [DAEMON_CHILD]: '1' },
  });
  const outcome = await new Promise<{ listening?: string; error?: string; code?: number }>((resolve) => {
    child.once('message', (message) => resolve(message as { listening?: string; error?: string }));
    child.once('exit', (code) => resolve({ error: `the background process exited with ${code}`, code: 1 }));
    child.once('error', (error) => resolve({ error: error.message, code: 1 }));
  });
  if (outcome.error !== undefined) {
    process.stderr.write(`hotpath-memcached: ${outcome.error}\n`);
    process.exitCode = outcome.code ?? 1;
    return;
  }
  process.stderr.write(
    `hotpath-memcached listening on ${outcome.listening} (pid ${child.pid}, in the background)\n`,
  );
  child.disconnect();
  child.unref();
}

async function serve(action: ServeAction): Promise<void> {
  for (const warning of action.warnings) process.stderr.write(`${warning}\n`);
  const { pidFile, user } = action.process;
  // as memcached does, give up root before listening (a unix socket is then the user's)
  if (user !== undefined && process.getuid?.() === 0) switchUser(user);
  let removePid = () => {};
  const server = createServer({
    ...action.options,
    onShutdown: () => {
      removePid();
      process.exit(0);
    },
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close().then(() => {
      removePid();
      process.exit(0);
    });
  };
  // before the listening line: whoever waits for it may signal at once
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  const address = await server.listen();
  const where =
    address.family === 'unix' ? `unix socket ${address.address}` : `${address.address}:${address.port}`;
  if (pidFile !== undefined) {
    writeFileSync(pidFile, `${process.pid}\n`);
    removePid = () => {
      try {
        unlinkSync(pidFile);
      } catch {
        // already gone
      }
    };
  }
  if (process.send !== undefined && process.env[DAEMON_CHILD] === '1') {
    process.send({ listening: where });
    process.disconnect();
  } else {
    process.stderr.write(`hotpath-memcached listening on ${where}\n`);
  }
}

/**
 * memcached's -u when run as root: no supplementary groups (root's would otherwise stay), then
 * the user's group and id, from /etc/passwd.
 */
function switchUser(user: string): void {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.split(':')[0] === user);
  const fields = line?.split(':');
  const uid = Number(fields?.[2]);
  const gid = Number(fields?.[3]);
  if (fields === undefined || !Number.isInteger(uid) || !Number.isInteger(gid)) {
    throw new HotpathMcError(
      'HP_MC_INVALID_OPTION',
      `-u: can't find the user ${JSON.stringify(user)} to switch to`,
    );
  }
  process.setgroups?.([]);
  process.setgid?.(gid);
  process.setuid?.(uid);
}

main().catch((error: unknown) => {
  const message =
    error instanceof HotpathMcError ? error.message : String((error as Error)?.message ?? error);
  if (process.send !== undefined && process.env[DAEMON_CHILD] === '1') {
    process.send({ error: message, code: 1 });
    process.disconnect();
    process.exitCode = 1;
    return;
  }
  process.stderr.write(`hotpath-memcached: ${message}\n`);
  // Bad usage exits 2, as in every hotpath CLI; anything else (e.g. the port is taken) 1.
  process.exit(error instanceof HotpathMcError && error.code === 'HP_MC_INVALID_OPTION' ? 2 : 1);
});
