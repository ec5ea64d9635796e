/**
 * The probe: preloaded into every node process of the server's tree with
 * `NODE_OPTIONS=--require probe.cjs` (bundled to dist/probe.cjs, CommonJS).
 *
 * It stays dormant until its process starts listening on $PORT (so `npm start`, shells and
 * other wrappers are left alone; every cluster worker that listens activates). Then it
 * connects to the runner's control socket (HOTPATH_PROBE_CONTROL = "port:token") and waits:
 * `warm` (before a load, memory on) starts the allocation meter and, if asked, the survivors
 * profile, which `survive` (after a window) writes as `<pid>-<window>.survivors.heapprofile`;
 * `edge` (a settle period before the window, else `start`) takes the opening collection; `start` opens the
 * window (CPU profiler, event-loop monitor; memory on: collections' record, heap sampler); `stop`
 * closes it, writes `<pid>-<window>.cpuprofile`, `.monitor.json`, `.heapprofile` to HOTPATH_PROBE_DIR.
 * It never throws into the host process.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, Server, type Socket } from 'node:net';
import { join } from 'node:path';
// The monitor alone: the package is free of side effects, so the bundle leaves its guard (and the
// guard's schema library) out.
import { createMonitor, type MonitorSnapshot } from '@hotpath/overload-guard';
import { type CpuSampler, startCpuSampler } from '@hotpath/tick-parser/cpu-sampler';
import { type DownstreamRecorder, installDownstream } from './probe-downstream.js';
import { type Edge, memoryEdges } from './probe-edge.js';
import {
  type HeapSampling,
  prepareMemory,
  startHeapSampling,
  stopHeapSampling,
} from './probe-heap-sampling.js';
import {
  closeMemory,
  endMemoryRecord,
  type MemoryRecording,
  memoryOn,
  startMemoryRecord,
} from './probe-memory.js';
import { cpuBetween, listThreads, startupThreads, threadsCpu } from './probe-threads.js';

/** The runtime's threads (V8's and Node's), listed when the probe loads: see probe-threads.ts. */
let runtimeThreads: number[] = [];

/** The record of downstream calls (HOTPATH_PROBE_WAITING=off: none), installed at the probe's load. */
let downstream: DownstreamRecorder | undefined;

/** Where v8-profiler-next is for the server's Node: HOTPATH_V8_PROFILER_PATH, else the app's own. */
function loadV8ProfilerNext(): unknown {
  const fromCwd = createRequire(join(process.cwd(), 'noop.js'));
  const explicit = process.env.HOTPATH_V8_PROFILER_PATH;
  if (explicit) {
    try {
      return fromCwd(explicit);
    } catch {
      // not built for this Node: try the app's own copy
    }
  }
  return fromCwd('v8-profiler-next');
}

/** Marks the window in a `--prof` log: V8 logs a code-creation line when these compile. */
function markProfLog(label: 'start' | 'stop', window: number): void {
  const name = `hotpath_window_${label}_${process.pid}_${window}_`;
  // The name is built from the pid only; the function is compiled so V8 logs its creation.
  new Function(`return function ${name}() { return 1; };`)()();
}

type ThreadCpuSource = 'threadCpuUsage' | 'proc-schedstat' | 'proc-stat';

/**
 * CPU time of this process's main thread (the event loop), µs: process.threadCpuUsage() where
 * Node has it (22.19+, 23.9+), else Linux's /proc/self/task/<pid>/schedstat (nanoseconds on the
 * CPU) or, without schedstat, the thread's utime + stime from its stat (clock ticks of 10 ms).
 * Undefined elsewhere.
 */
function mainThreadCpu(): { micros: number; source: ThreadCpuSource } | undefined {
  const threadCpuUsage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
  if (typeof threadCpuUsage === 'function' && process.env.HOTPATH_THREAD_CPU !== 'proc') {
    const usage = threadCpuUsage.call(process);
    return { micros: usage.user + usage.system, source: 'threadCpuUsage' };
  }
  const task = `/proc/self/task/${process.pid}`;
  try {
    const ns = Number(readFileSync(`${task}/schedstat`, 'latin1').split(' ')[0]);
    if (Number.isFinite(ns)) return { micros: ns / 1000, source: 'proc-schedstat' };
  } catch {
    // no schedstat (kernel without CONFIG_SCHED_INFO): the stat line's clock ticks
  }
  try {
    const stat = readFileSync(`${task}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime), counted after the command name's ")": 12 and 13.
    const ticks = Number(fields[11]) + Number(fields[12]);
    if (Number.isFinite(ticks)) return { micros: ticks * 10_000, source: 'proc-stat' };
  } catch {
    // not Linux
  }
  return undefined;
}

/**
 * A monitor reading and the interval it closes: its length (ms) and, in a window measured in
 * slices, whether the load was elsewhere (the other side's slice) for that interval.
 */
type Reading = MonitorSnapshot & { ms: number; idle?: true };

interface Window {
  profiler?: CpuSampler;
  monitor: { snapshot(): MonitorSnapshot; close(): void };
  samples: Reading[];
  /** The load is elsewhere (between this side's slices): readings until the next mark say so. */
  idle: boolean;
  /** When the last reading was taken (performance.now()). */
  readAt: number;
  timer: NodeJS.Timeout;
  id: number;
  startedAt: number;
  cpu: NodeJS.CpuUsage;
  thread: ReturnType<typeof mainThreadCpu>;
  /** The runtime's threads and those hotpath's profilers started, and their CPU µs at the start. */
  runtime: { tids: number[]; cpu: Map<number, number> };
  memory?: MemoryRecording;
  heap?: HeapSampling;
}

/** Takes a reading: the monitor's numbers since the last one, with that interval's length and state. */
function readMonitor(window: Window): void {
  const now = performance.now();
  const snapshot = window.monitor.snapshot();
  window.samples.push({
    ...snapshot,
    ms: now - window.readAt,
    ...(window.idle ? { idle: true as const } : {}),
  });
  window.readAt = now;
}

/**
 * The load moves to or from this server (a window measured in slices): the interval so far is
 * read with the state it had, and the readings after it carry the new one.
 */
function markIdle(window: Window | undefined, idle: boolean): void {
  if (!window || window.idle === idle) return;
  readMonitor(window);
  window.idle = idle;
}

/** The name the report shows for the profiler that ran. */
function profilerName(sampler: CpuSampler | undefined): string | undefined {
  if (!sampler) return undefined;
  return sampler.profiler === 'inspector' ? 'node:inspector' : sampler.profiler;
}

/**
 * Starts a measured window after its edge: the record of collections and the sampling heap
 * profiler (with memory on), the CPU sampler (or the --prof mark), the event-loop monitor, the clocks.
 */
async function openWindow(
  id: number,
  mode: string,
  edge: Edge,
): Promise<{ window: Window; profiler?: CpuSampler; note?: string }> {
  let profiler: CpuSampler | undefined;
  let note: string | undefined;
  const memory = startMemoryRecord(edge.memory);
  const heap = memory && !edge.heapNote ? await startHeapSampling(edge.interval) : undefined;
  // The threads the CPU profiler starts (V8's profiler thread) count as the runtime's.
  const before = new Set(listThreads());
  if (mode === 'cpuprofile') {
    profiler = await startCpuSampler({ samplingIntervalMicros: 1000, loadV8ProfilerNext });
    // v8-profiler-next simply not being installed is the documented default, not news.
    if (profiler.fallback && !/Cannot find module/.test(profiler.fallback)) note = profiler.fallback;
  } else if (mode === 'prof') {
    markProfLog('start', id);
  }
  const runtime = [...runtimeThreads, ...listThreads().filter((tid) => !before.has(tid))];
  const monitor = createMonitor({ resolution: 10, sampleInterval: 0 });
  const samples: Reading[] = [];
  const timer = setInterval(() => readMonitor(window), 1000);
  timer.unref();
  downstream?.start();
  const window: Window = {
    profiler,
    monitor,
    samples,
    idle: false,
    readAt: performance.now(),
    timer,
    id,
    startedAt: Date.now(),
    cpu: process.cpuUsage(),
    thread: mainThreadCpu(),
    runtime: { tids: runtime, cpu: threadsCpu(runtime) },
    memory,
    heap,
  };
  return { window, profiler, note: [note, edge.heapNote].filter(Boolean).join('; ') || undefined };
}

/**
 * Stops the CPU profiler and the sampling heap profiler and writes what they recorded; returns
 * only the files, so that no profile object outlives this call.
 */
async function writeProfiles(current: Window, dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const profile = current.profiler ? await current.profiler.stop() : undefined;
  if (profile) {
    const profileFile = join(dir, `${process.pid}-${current.id}.cpuprofile`);
    writeFileSync(profileFile, JSON.stringify(profile));
    files.cpuprofile = profileFile;
  }
  const heapProfile = await stopHeapSampling(current.heap);
  if (heapProfile) {
    const heapFile = join(dir, `${process.pid}-${current.id}.heapprofile`);
    writeFileSync(heapFile, JSON.stringify(heapProfile));
    files.heapprofile = heapFile;
  }
  return files;
}

/** Ends a window: its CPU time, the monitor's samples and the profile, written beside the probe's dir. */
async function closeWindow(
  current: Window,
  dir: string,
  mode: string,
): Promise<{ files: Record<string, string>; error?: string }> {
  // CPU time of this process (all its threads) over the window: stable under contention.
  const cpu = process.cpuUsage(current.cpu);
  const thread = mainThreadCpu();
  const threadMicros =
    current.thread && thread && thread.source === current.thread.source
      ? thread.micros - current.thread.micros
      : undefined;
  const runtimeMicros = current.runtime.tids.length
    ? cpuBetween(current.runtime.cpu, threadsCpu(current.runtime.tids))
    : undefined;
  clearInterval(current.timer);
  readMonitor(current);
  let waited: ReturnType<DownstreamRecorder['stop']>;
  try {
    waited = downstream?.stop();
  } catch {
    waited = undefined;
  }
  current.monitor.close();
  const durationMs = Date.now() - current.startedAt;
  if (mode === 'prof') markProfLog('stop', current.id);
  const files: Record<string, string> = {};
  let error: string | undefined;
  try {
    // The window's record of collections and heap first (the profiles' results are not counted as
    // allocated), then the profiles, written and let go (not retained), then the closing collection.
    const ending = endMemoryRecord(current.memory);
    Object.assign(files, await writeProfiles(current, dir));
    const memory = await closeMemory(current.memory, ending);
    const monitorFile = join(dir, `${process.pid}-${current.id}.monitor.json`);
    writeFileSync(
      monitorFile,
      JSON.stringify({
        pid: process.pid,
        durationMs,
        cpuUserMicros: cpu.user,
        cpuSystemMicros: cpu.system,
        mainThreadCpuMicros: threadMicros,
        mainThreadCpuSource: threadMicros === undefined ? undefined : thread?.source,
        runtimeThreadCpuMicros: runtimeMicros,
        samples: current.samples,
        memory,
        downstream: waited,
      }),
    );
    files.monitor = monitorFile;
  } catch (err) {
    error = (err as Error).message;
  }
  return { files, error };
}

function activate(control: string, dir: string, mode: string): void {
  const [portText, token] = control.split(':');
  const socket: Socket = connect({ port: Number(portText), host: '127.0.0.1' });
  downstream?.untrack(socket);
  socket.unref();
  socket.setNoDelay(true);
  socket.on('error', () => {});
  let window: Window | undefined;
  const send = (message: object) => {
    if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
  };
  socket.on('connect', () =>
    send({ type: 'hello', token, pid: process.pid, ppid: process.ppid, node: process.version }),
  );

  let starting = false;
  const edges = memoryEdges(dir, send, () => window !== undefined || starting);
  const start = async (id: number) => {
    if (window || starting) return;
    starting = true;
    const edged = await edges.open();
    const opened = await openWindow(id, mode, edged);
    window = opened.window;
    const { profiler, note } = opened;
    starting = false;
    send({ type: 'started', pid: process.pid, profiler: profilerName(profiler) ?? mode, note });
  };

  const stop = async () => {
    const current = window;
    if (!current) {
      send({ type: 'stopped', pid: process.pid, error: 'the window was never started' });
      return;
    }
    window = undefined;
    const { files, error } = await closeWindow(current, dir, mode);
    send({
      type: 'stopped',
      pid: process.pid,
      profiler: profilerName(current.profiler) ?? mode,
      files,
      error,
    });
  };

  onLines(socket, (line) => {
    try {
      const message = JSON.parse(line) as { type?: string; window?: unknown; survivors?: unknown };
      const id = Number.isSafeInteger(message.window) ? (message.window as number) : 1;
      if (message.type === 'warm' || message.type === 'edge' || message.type === 'survive')
        void edges.answer(message.type, id, message.survivors === true);
      else if (message.type === 'start')
        start(id).catch((err) => send({ type: 'started', pid: process.pid, error: String(err) }));
      else if (message.type === 'stop') void stop();
      else if (message.type === 'idle' || message.type === 'busy') markIdle(window, message.type === 'idle');
    } catch {
      // not for us
    }
  });
}

/** Calls `handle` with each newline-ended line the socket receives. */
function onLines(socket: Socket, handle: (line: string) => void): void {
  let buffered = '';
  socket.on('data', (chunk) => {
    buffered += chunk.toString();
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      handle(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
    }
  });
}

function install(): void {
  const control = process.env.HOTPATH_PROBE_CONTROL;
  const dir = process.env.HOTPATH_PROBE_DIR;
  const mode = process.env.HOTPATH_PROBE_PROFILER ?? 'cpuprofile';
  if (!control || !dir) return;
  runtimeThreads = startupThreads();
  downstream = installDownstream(typeof __filename === 'string' ? __filename : '');
  const wanted = Number(process.env.PORT);
  let active = false;
  const original = Server.prototype.listen;
  // biome-ignore lint/suspicious/noExplicitAny: listen has many overloads; we pass them through untouched.
  Server.prototype.listen = function patchedListen(this: Server, ...args: any[]) {
    this.once('listening', () => {
      try {
        const address = this.address();
        if (active || typeof address !== 'object' || !address) return;
        if (Number.isFinite(wanted) && wanted > 0 && address.port !== wanted) return;
        active = true;
        // --prof logs are flushed on a normal exit only: turn the runner's SIGTERM into one.
        if (mode === 'prof' && process.listenerCount('SIGTERM') === 0)
          process.once('SIGTERM', () => process.exit(0));
        if (memoryOn()) prepareMemory();
        downstream?.serve(this);
        activate(control, dir, mode);
      } catch {
        // never break the server
      }
    });
    return original.apply(this, args as Parameters<typeof original>);
  } as typeof original;
}

try {
  install();
} catch {
  // the probe must never break the process it is loaded into
}
