// How a command's whole tree is found: the marker in its environment, the subreaper launch (Linux:
// orphans are re-parented to the command's shell) and the periodic walk of /proc children.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { type ProcessEntry, processEntry } from './process-table.js';

/** The one shell every command from the inputs runs through. */
export const SHELL = '/bin/sh';

export const MARKER = 'HOTPATH_PROCESS_GROUP';

/** Linux, where /proc lists each process's children. */
export const HAS_PROC = (() => {
  try {
    return readdirSync(`/proc/${process.pid}/task`).length > 0;
  } catch {
    return false;
  }
})();

/**
 * prctl(2)'s number on the architectures where Linux gives it one that Node's `process.arch`
 * names, for PR_SET_CHILD_SUBREAPER (36).
 */
const PRCTL: Partial<Record<string, number>> = {
  x64: 157,
  arm64: 167,
  riscv64: 167,
  loong64: 167,
  ia32: 172,
  arm: 172,
  s390x: 172,
  ppc64: 171,
};
const PR_SET_CHILD_SUBREAPER = 36;

/**
 * Linux: the shell is made a child subreaper before it starts the command, so that a process
 * orphaned anywhere below it (a double fork, `sh -c 'daemon &'`, a helper that exits at once)
 * is re-parented to the shell — still inside the tree that the walk and the stop follow —
 * instead of to init, whatever its session or environment. Node cannot call prctl(2), and
 * the attribute survives execve(2) but not fork: a one-line perl (perl-base is part of every
 * Debian and Ubuntu install, GitHub's runners included) calls it and execs the shell in place,
 * so the shell keeps the pid Node spawned. Without perl or /proc, or on another architecture,
 * the shell runs as before and only the walk and the marker find what daemonised.
 */
export const SUBREAPER = ((): { perl: string; prctl: number } | undefined => {
  const prctl = PRCTL[process.arch];
  if (process.platform !== 'linux' || !HAS_PROC || prctl === undefined) return undefined;
  const perl = ['/usr/bin/perl', '/bin/perl'].find((path) => existsSync(path));
  return perl ? { perl, prctl } : undefined;
})();

/**
 * The perl that makes itself a subreaper and execs `/bin/sh -c command` with `env` (in which
 * PERL_BADLANG silences perl's complaint about a missing locale, removed again before the exec
 * unless the caller's environment had it). A failed prctl is not fatal: the shell runs anyway.
 *
 * With `linger` (a command run to completion: install, build, setupCommand, the config child,
 * the profiler's install), perl does not exec the shell in place: it forks it and stays, the
 * subreaper, until every process below it has ended. A survivor orphaned in the command's last
 * moments — `(setsid env -i … &); true` exits within a few ms, before any walk of the tree — is
 * re-parented to perl, which is still there, not to init. The shell's own status goes to fd 3
 * as one line (`exit N` or `signal N`) the moment the shell ends, so the caller stops what is
 * left (perl's children, found in the tree) with the same stop as a server's. fd 3 is closed in
 * the shell: the command cannot write a status of its own.
 */
export function subreaperLaunch(
  launcher: { perl: string; prctl: number },
  command: string,
  env: NodeJS.ProcessEnv,
  options: { linger?: boolean } = {},
): [string, string[]] {
  const added = env.PERL_BADLANG === undefined;
  if (added) env.PERL_BADLANG = '0';
  const exec = ['{ exec { $ARGV[0] } @ARGV }', 'print STDERR "$ARGV[0]: $!\\n";', 'exit 127;'];
  const script = options.linger
    ? [
        `syscall(${launcher.prctl}, ${PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0);`,
        'delete $ENV{PERL_BADLANG} if shift @ARGV;',
        'open(my $st, \'>&=\', 3) or die "fd 3: $!\\n";',
        'my $pid = fork();',
        'if (!defined $pid) { print STDERR "fork: $!\\n"; exit 127; }',
        `if ($pid == 0) { close($st); ${exec.join(' ')} }`,
        'my $status = 0;',
        'while ((my $done = wait()) != -1) {',
        '  next unless $done == $pid;',
        '  $status = $?;',
        '  syswrite($st, ($status & 127) ? "signal " . ($status & 127) . "\\n" : "exit " . ($status >> 8) . "\\n");',
        '  close($st);',
        '}',
        // Ends as the shell did (its signal re-raised), so its exit reads the same either way.
        'if ($status & 127) { $SIG{CHLD} = "DEFAULT"; kill($status & 127, $$); }',
        'exit(($status & 127) ? 128 + ($status & 127) : $status >> 8);',
      ].join(' ')
    : [
        `syscall(${launcher.prctl}, ${PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0);`,
        'delete $ENV{PERL_BADLANG} if shift @ARGV;',
        ...exec,
      ].join(' ');
  return [launcher.perl, ['-e', script, '--', added ? '1' : '', SHELL, '-c', command]];
}

/** How a shell ended: its code, or the signal that ended it. */
export interface ShellStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** `exit N` / `signal N`: the shell's status as the lingering subreaper writes it on fd 3. */
function statusLine(line: string): ShellStatus | undefined {
  const match = /^(exit|signal) (\d{1,3})$/.exec(line);
  if (!match) return undefined;
  const n = Number(match[2]);
  if (match[1] === 'exit') return { code: n, signal: null };
  const name = Object.entries(constants.signals).find(([, number]) => number === n)?.[0];
  return { code: null, signal: (name as NodeJS.Signals | undefined) ?? 'SIGKILL' };
}

/** Calls `settle` with the shell's status once the lingering subreaper's line arrives on `stream`. */
export function onShellStatus(stream: Readable, settle: (status: ShellStatus) => void): void {
  let text = '';
  stream.setEncoding('latin1');
  stream.on('data', (chunk: string) => {
    text = (text + chunk).slice(0, 64);
    const parsed = text.includes('\n') ? statusLine(text.split('\n')[0] as string) : undefined;
    if (parsed) settle(parsed);
  });
  stream.on('error', () => {});
}

/**
 * How often a running command's tree is walked. A process that lives shorter than this and
 * forks a survivor before it exits (a double fork, `sh -c 'daemon &'`) is never seen by the walk:
 * that survivor is found only if it keeps the marker in its environment.
 */
export const TREE_SAMPLE_MS = 100;

/** The children of `pid` (every thread's), from /proc/<pid>/task/<tid>/children. */
export function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const task of tasks) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch {
      continue; // the thread ended while we looked
    }
    for (const child of text.split(' ')) if (child.trim() !== '') found.push(Number(child));
  }
  return found;
}

/**
 * One walk: drops from `seen` what is gone or whose pid now names another process (its start
 * time differs), then adds every process below those left (an orphan's own children included).
 */
export function walkTree(seen: Map<number, number>): void {
  for (const [pid, start] of seen) if (processEntry(pid)?.startTime !== start) seen.delete(pid);
  const queue = [...seen.keys()];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of childrenOf(pid)) {
      if (seen.has(child) || child === process.pid) continue;
      const entry = processEntry(child);
      if (!entry) continue;
      seen.set(child, entry.startTime);
      queue.push(child);
    }
  }
}

/**
 * Linux: processes whose environment carries `marker` — those that escaped the process group
 * and the tree by daemonising (setsid, double fork) but kept the environment.
 */
export function marked(marker: string, table: readonly ProcessEntry[]): ProcessEntry[] {
  const needle = Buffer.from(`${MARKER}=${marker}\0`);
  return table.filter((entry) => {
    if (entry.pid === process.pid) return false;
    try {
      return readFileSync(`/proc/${entry.pid}/environ`).includes(needle);
    } catch {
      return false; // not ours to read, or gone
    }
  });
}

/** Every process of `table` below one of `roots` (children that left the group included). */
export function descendants(roots: Iterable<number>, table: readonly ProcessEntry[]): ProcessEntry[] {
  const children = new Map<number, ProcessEntry[]>();
  for (const entry of table) {
    const list = children.get(entry.ppid);
    if (list) list.push(entry);
    else children.set(entry.ppid, [entry]);
  }
  const found: ProcessEntry[] = [];
  const queue = [...roots];
  const visited = new Set<number>();
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    if (visited.has(pid)) continue;
    visited.add(pid);
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}
