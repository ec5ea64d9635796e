import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

/** The one shell every command from the inputs runs through. */
export const SHELL = '/bin/sh';

/** Keeps the last `limit` lines a process printed (stdout and stderr interleaved). */
export class OutputTail {
  private readonly lines: string[] = [];
  private partial = '';
  constructor(private readonly limit = 40) {}

  push(chunk: Buffer | string): void {
    const text = this.partial + chunk.toString();
    const parts = text.split(/\r?\n/);
    this.partial = parts.pop() ?? '';
    for (const line of parts) this.add(line);
    if (this.partial.length > 4096) {
      this.add(this.partial);
      this.partial = '';
    }
  }

  private add(line: string): void {
    this.lines.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
    if (this.lines.length > this.limit) this.lines.shift();
  }

  /** The last `n` lines, including an unterminated last line. */
  last(n = 20): string[] {
    const all = this.partial ? [...this.lines, this.partial] : [...this.lines];
    return all.slice(-n);
  }
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A shell command running in its own process group. */
export interface GroupProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly output: OutputTail;
  /** Resolves when the shell itself exits. */
  readonly exited: Promise<Exit>;
  /** null while running. */
  exit(): Exit | null;
  /**
   * `HOTPATH_PROCESS_GROUP=<random>` in the environment of everything the command starts: how
   * processes that left the group and the tree (setsid, double fork) are still found.
   */
  readonly marker: string;
}

export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Also forward output here (e.g. a log stream); optional. */
  onOutput?: (chunk: Buffer) => void;
}

/**
 * Runs `command` through `/bin/sh -c` in a new process group (so the whole tree can be
 * signalled at once). Nothing is interpolated into the command: it is the user's own string.
 */
export function spawnInGroup(command: string, options: SpawnOptions): GroupProcess {
  const marker = randomUUID();
  const child = spawn(SHELL, ['-c', command], {
    cwd: options.cwd,
    env: { ...options.env, [MARKER]: marker },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = new OutputTail();
  let exit: Exit | null = null;
  const onData = (chunk: Buffer) => {
    output.push(chunk);
    options.onOutput?.(chunk);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<Exit>((resolve) => {
    child.once('error', (err) => {
      output.push(`${SHELL}: ${err.message}\n`);
      exit = { code: 127, signal: null };
      resolve(exit);
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    });
  });
  return { child, pid: child.pid ?? -1, output, exited, exit: () => exit, marker };
}

const MARKER = 'HOTPATH_PROCESS_GROUP';

/**
 * Linux: live processes whose environment carries `marker` — those that escaped the process
 * group and the tree by daemonising (setsid, double fork) but kept the environment.
 */
function marked(marker: string): number[] {
  const needle = Buffer.from(`${MARKER}=${marker}\0`);
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`).includes(needle)) found.push(Number(name));
    } catch {
      // not ours to read, or gone
    }
  }
  return found;
}

/** Linux: every live descendant of `root` (children that left the group included). */
function descendants(root: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const parentOf = new Map<number, number>();
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // pid (comm) state ppid ...; comm may contain spaces and parentheses.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (rest[0] === 'Z') continue;
      parentOf.set(Number(name), Number(rest[1]));
    } catch {
      // the process went away while we looked
    }
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    for (const [child, parent] of parentOf) {
      if (parent === pid && !found.includes(child)) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  // kill(0) succeeds on zombies too: look for a live member where /proc is available.
  try {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (Number(rest[2]) === pgid && rest[0] !== 'Z') return true;
      } catch {
        // gone
      }
    }
    return false;
  } catch {
    return true;
  }
}

function signal(pids: readonly number[], pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    // group already gone
  }
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Stops the whole tree: SIGTERM to the process group and every descendant, then SIGKILL
 * after `graceMs`; resolves once no member is left alive and the shell has been reaped.
 */
export async function stopGroup(proc: GroupProcess, graceMs = 3000): Promise<void> {
  if (proc.pid <= 0) return;
  const tree = [...new Set([...descendants(proc.pid), ...marked(proc.marker)])];
  signal(tree, proc.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!groupAlive(proc.pid) && tree.every((pid) => !isAlive(pid))) break;
    await sleep(50);
  }
  const left = [...new Set([...tree, ...descendants(proc.pid), ...marked(proc.marker)])].filter(isAlive);
  if (groupAlive(proc.pid) || left.length > 0) {
    signal(left, proc.pid, 'SIGKILL');
    const hard = Date.now() + 2000;
    while (Date.now() < hard && (groupAlive(proc.pid) || left.some(isAlive))) await sleep(25);
  }
  await Promise.race([proc.exited, sleep(2000)]);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true;
  }
}

/** Synchronous last resort (process 'exit' handlers): SIGKILL the group. */
export function killGroupNow(proc: GroupProcess): void {
  if (proc.pid <= 0) return;
  for (const pid of marked(proc.marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  if (proc.exit() !== null) return;
  try {
    process.kill(-proc.pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** Runs a command to completion through the shell; resolves with its exit and output tail. */
export async function runCommand(
  command: string,
  options: SpawnOptions & { timeoutMs?: number; signal?: AbortSignal },
): Promise<{ exit: Exit; output: OutputTail }> {
  const proc = spawnInGroup(command, options);
  const onExit = () => killGroupNow(proc);
  process.once('exit', onExit);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const timeout = new Promise<'timeout' | 'aborted'>((resolve) => {
    if (options.timeoutMs) timer = setTimeout(() => resolve('timeout'), options.timeoutMs);
    if (options.signal) {
      onAbort = () => resolve('aborted');
      if (options.signal.aborted) onAbort();
      else options.signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  const first = await Promise.race([proc.exited, timeout]);
  if (timer) clearTimeout(timer);
  if (onAbort) options.signal?.removeEventListener('abort', onAbort);
  process.removeListener('exit', onExit);
  if (first === 'aborted') {
    proc.output.push('(aborted)\n');
    await stopGroup(proc, 1000);
    return { exit: { code: null, signal: 'SIGTERM' }, output: proc.output };
  }
  if (first === 'timeout') {
    proc.output.push(`(timed out after ${Math.round((options.timeoutMs ?? 0) / 1000)} s)\n`);
    await stopGroup(proc, 1000);
    return { exit: { code: null, signal: 'SIGKILL' }, output: proc.output };
  }
  // Children the command left behind in its group are not ours to keep.
  await stopGroup(proc, 500);
  return { exit: first, output: proc.output };
}
