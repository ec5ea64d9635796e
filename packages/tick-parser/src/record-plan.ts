import { accessSync, constants, statSync } from 'node:fs';
import { basename, delimiter, join } from 'node:path';
import { HotpathTicksError } from './errors.js';

/** The log file template handed to V8; it writes `isolate-<address>-<pid>-v8.log` beside it. */
export const LOG_NAME = 'v8.log';

/**
 * Node scripts that only launch other commands: the `node` put on PATH runs them without the
 * profiler, so their own start-up does not end up in the report.
 */
const LAUNCHERS = [
  'npm',
  'npx',
  'npm-cli.js',
  'npx-cli.js',
  'pnpm',
  'pnpx',
  'pnpm.cjs',
  'pnpm.js',
  'yarn',
  'yarnpkg',
  'yarn.js',
  'yarn.cjs',
  'corepack',
  'corepack.js',
];

/** How a command is run under the tick profiler. */
export type RecordPlan =
  /** `node …`: the profiler flags go right after the executable, before the script and its arguments. */
  | { kind: 'node'; file: string; args: string[] }
  /**
   * Anything else (`npm start`, `npx …`, a shell script): Node refuses `--prof` in NODE_OPTIONS
   * (Node 20, 22 and 24: "--prof is not allowed in NODE_OPTIONS"), so a `node` that adds the
   * flags is put first on PATH; every node the command starts by name is profiled.
   */
  | { kind: 'path'; file: string; args: string[]; realNode: string };

/** Whether `command` names a Node executable (`node`, `/usr/bin/node`, `nodejs`, `node.exe`). */
export function isNodeCommand(command: string): boolean {
  return /^node(js)?(\.exe)?$/i.test(basename(command));
}

/** The profiler flags: V8's tick log, written into `dir` (one file per isolate and process). */
export function profilerFlags(dir: string): string[] {
  return ['--prof', `--logfile=${join(dir, LOG_NAME)}`];
}

export function planRecording(command: string[], dir: string, env: NodeJS.ProcessEnv): RecordPlan {
  const [file, ...rest] = command;
  if (file === undefined || file === '') {
    throw new HotpathTicksError(
      'HP_TICKS_BAD_OPTION',
      `no command to record: expected the program and its arguments, e.g. ["node", "app.js"], got ${JSON.stringify(command)}`,
    );
  }
  if (isNodeCommand(file)) return { kind: 'node', file, args: [...profilerFlags(dir), ...rest] };
  return { kind: 'path', file, args: rest, realNode: findOnPath('node', env.PATH) ?? process.execPath };
}

/** The first executable regular file called `name` in the directories of `path`. */
export function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const directory of (path ?? '').split(delimiter)) {
    if (!directory) continue;
    const candidate = join(directory, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not there, or not executable
    }
  }
  return undefined;
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The `node` put first on PATH: runs the real node with the profiler flags, except for the
 * launchers (npm, npx, pnpm, yarn, corepack), which run unprofiled.
 */
export function nodeShim(realNode: string, dir: string): string {
  const node = shellQuote(realNode);
  return `#!/bin/sh
# Written by hotpath-ticks record: Node does not accept --prof in NODE_OPTIONS, so this node adds it.
case "\${1##*/}" in
  ${LAUNCHERS.join('|')}) exec ${node} "$@" ;;
esac
exec ${node} ${profilerFlags(dir).map(shellQuote).join(' ')} "$@"
`;
}
