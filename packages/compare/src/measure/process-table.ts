import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** One process as /proc/<pid>/stat shows it (Linux). */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  /** Process group. */
  pgid: number;
  /** R, S, D, Z, … (a zombie leader may still have live threads: see liveness). */
  state: string;
  /** Clock ticks after boot: with the pid, names one process even when the pid is reused. */
  startTime: number;
}

function parseStat(pid: number, text: string): ProcessEntry | undefined {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
  // cutime cstime priority nice threads itrealvalue starttime …; comm may hold spaces and ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, ppid, pgid] = fields;
  const startTime = fields[19];
  if (state === undefined || ppid === undefined || pgid === undefined || startTime === undefined)
    return undefined;
  return { pid, ppid: Number(ppid), pgid: Number(pgid), state, startTime: Number(startTime) };
}

function readStat(path: string, pid: number): ProcessEntry | undefined {
  try {
    return parseStat(pid, readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/** One process's entry, or undefined when it is gone (or there is no /proc). */
export const processEntry = (pid: number): ProcessEntry | undefined => readStat(`/proc/${pid}/stat`, pid);

/** Linux, where /proc tells a zombie from a live process. */
const HAS_PROC = existsSync('/proc/self/stat');

/** Every process in /proc; undefined where there is no /proc (not Linux). */
export function processTable(): ProcessEntry[] | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const table: ProcessEntry[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const entry = processEntry(Number(name));
    if (entry) table.push(entry);
  }
  return table;
}

export type Liveness = 'alive' | 'exiting' | 'gone';

const ended = (state: string) => state === 'Z' || state === 'X';

/**
 * Whether anything of process `pid` is left. `exiting`: its main thread has ended (its stat says
 * Z) but other threads still run — they still hold its files, so a listening port stays open
 * until the last one ends (a `node` server's main thread showed Z while its port still accepted
 * in 25 of 40 SIGTERMs). `gone`: reaped, or a zombie with no thread left. `startTime` (from
 * ProcessEntry) makes a reused pid count as gone. Without /proc, kill(pid, 0) decides.
 */
export function liveness(pid: number, startTime?: number): Liveness {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return 'gone';
  }
  const entry = processEntry(pid);
  if (!entry) return HAS_PROC ? 'gone' : 'alive';
  if (startTime !== undefined && entry.startTime !== startTime) return 'gone';
  if (!ended(entry.state)) return 'alive';
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 'gone';
  }
  for (const task of tasks) {
    if (Number(task) === pid) continue;
    // A thread that ended while we looked has no stat left.
    const thread = readStat(`/proc/${pid}/task/${task}/stat`, Number(task));
    if (thread && !ended(thread.state)) return 'exiting';
  }
  return 'gone';
}

/** The processes of `pids` of which something is left (see liveness). */
export function stillAlive(pids: readonly number[]): number[] {
  return pids.filter((pid) => liveness(pid) !== 'gone');
}

/**
 * Linux: the listening TCP sockets on `port` (any address) as `socket:[inode]`, from
 * /proc/net/tcp{,6}: a read of two files, fast enough to look while a process is exiting.
 */
export function listeningSockets(port: number): Set<string> {
  const inodes = new Set<string>();
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // sl local_address rem_address st … inode (column 9); st 0A is LISTEN.
      const local = cols[1];
      const inode = cols[9];
      if (local?.endsWith(`:${hex}`) && cols[3] === '0A' && inode) inodes.add(`socket:[${inode}]`);
    }
  }
  return inodes;
}

/**
 * Linux: the sockets this process holds (`socket:[inode]`, from /proc/self/fd). hotpath's own
 * listeners (the probe control) are never a stopped tree's.
 */
export function ownSockets(): Set<string> {
  return new Set(fdLinks('/proc/self/fd').filter((link) => link.startsWith('socket:[')));
}

/**
 * Linux: the processes listening on TCP `port` (any address), from /proc/net/tcp{,6} and the
 * socket links in /proc/<pid>/fd. For diagnostics: who holds a port that should be closed.
 */
export function listenersOf(port: number): number[] {
  const inodes = listeningSockets(port);
  if (inodes.size === 0) return [];
  const found: number[] = [];
  for (const entry of processTable() ?? []) {
    // A zombie main thread has no files of its own: its live threads' fd folders still show them.
    const folders = [`/proc/${entry.pid}/fd`];
    if (ended(entry.state)) {
      try {
        for (const task of readdirSync(`/proc/${entry.pid}/task`))
          folders.push(`/proc/${entry.pid}/task/${task}/fd`);
      } catch {
        // gone
      }
    }
    if (folders.some((folder) => holdsAny(folder, inodes))) found.push(entry.pid);
  }
  return found;
}

/** Where each open file in an fd folder points (`socket:[inode]`, a path, …); [] when gone. */
function fdLinks(folder: string): string[] {
  let fds: string[];
  try {
    fds = readdirSync(folder);
  } catch {
    return [];
  }
  const links: string[] = [];
  for (const fd of fds) {
    try {
      links.push(readlinkSync(`${folder}/${fd}`));
    } catch {
      // closed while we looked
    }
  }
  return links;
}

function holdsAny(folder: string, inodes: ReadonlySet<string>): boolean {
  return fdLinks(folder).some((link) => inodes.has(link));
}
