import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';

/** What one server process reported when its measured window closed. */
export interface ProbeReport {
  pid: number;
  node?: string;
  /** 'v8-profiler-next', 'node:inspector', 'prof' or 'none'. */
  profiler: string;
  /** `survivors`: the survivors profile of the load after the window (see survivors()). */
  files: { cpuprofile?: string; monitor?: string; heapprofile?: string; survivors?: string };
  note?: string;
  error?: string;
}

interface Attached {
  pid: number;
  node?: string;
  socket: Socket;
  /** The probe answered `warm` (whether its survivors profile runs). */
  warming?: boolean;
  /** The probe answered `edge` (whether it took the window's opening collection). */
  edged?: boolean;
  /** The probe answered `survive`: the survivors profile it wrote, or null. */
  survived?: string | null;
  started?: { profiler: string; note?: string; error?: string };
  stopped?: ProbeReport;
}

/**
 * The runner's end of the probe's control channel: a TCP socket on 127.0.0.1 that each
 * activated probe connects to (authenticated by a random token passed in its environment).
 */
export class ProbeControl {
  private readonly server: Server;
  private readonly probes = new Map<number, Attached>();
  private readonly waiters = new Set<() => void>();
  readonly token = randomBytes(12).toString('hex');
  port = 0;

  private constructor() {
    this.server = createServer((socket) => this.accept(socket));
  }

  static async open(): Promise<ProbeControl> {
    const control = new ProbeControl();
    await new Promise<void>((resolve, reject) => {
      control.server.once('error', reject);
      control.server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = control.server.address();
    control.port = typeof address === 'object' && address ? address.port : 0;
    return control;
  }

  /** The value of HOTPATH_PROBE_CONTROL for the server's environment. */
  get address(): string {
    return `${this.port}:${this.token}`;
  }

  get attached(): number {
    return this.probes.size;
  }

  private notify(): void {
    for (const waiter of this.waiters) waiter();
  }

  private accept(socket: Socket): void {
    let buffered = '';
    let pid = 0;
    socket.setNoDelay(true);
    socket.on('error', () => {});
    socket.on('close', () => {
      if (pid) this.notify();
    });
    socket.on('data', (chunk) => {
      buffered += chunk.toString();
      if (buffered.length > 1_000_000) socket.destroy();
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(line);
        } catch {
          continue;
        }
        if (message.type === 'hello') {
          if (message.token !== this.token || typeof message.pid !== 'number') {
            socket.destroy();
            return;
          }
          pid = message.pid;
          this.probes.set(pid, { pid, node: String(message.node ?? ''), socket });
        } else if (pid && message.type === 'warming') {
          const probe = this.probes.get(pid);
          if (probe) probe.warming = message.survivors === true;
        } else if (pid && message.type === 'edged') {
          const probe = this.probes.get(pid);
          if (probe) probe.edged = message.memory === true;
        } else if (pid && message.type === 'survived') {
          const probe = this.probes.get(pid);
          if (probe) probe.survived = typeof message.file === 'string' ? message.file : null;
        } else if (pid && message.type === 'started') {
          const probe = this.probes.get(pid);
          if (probe)
            probe.started = {
              profiler: String(message.profiler ?? 'none'),
              note: message.note as string | undefined,
              error: message.error as string | undefined,
            };
        } else if (pid && message.type === 'stopped') {
          const probe = this.probes.get(pid);
          if (probe)
            probe.stopped = {
              pid,
              node: probe.node,
              profiler: String(message.profiler ?? 'none'),
              files: (message.files as ProbeReport['files']) ?? {},
              note: probe.started?.note,
              error: message.error as string | undefined,
            };
        }
        this.notify();
      }
    });
  }

  /** Waits until `predicate` holds or `timeoutMs` passes; returns whether it held. */
  private async until(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
    if (predicate()) return true;
    return new Promise((resolve) => {
      const check = () => {
        if (predicate()) finish(true);
      };
      const timer = setTimeout(() => finish(false), timeoutMs);
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(ok);
      };
      this.waiters.add(check);
    });
  }

  /** Waits for at least one probe to attach (the server process started listening). */
  waitForProbe(timeoutMs: number): Promise<boolean> {
    return this.until(() => this.probes.size > 0, timeoutMs);
  }

  private live(): Attached[] {
    return [...this.probes.values()].filter((p) => !p.socket.destroyed);
  }

  /**
   * Before the warm-up of window number `window`: every attached process starts its meter of how
   * fast the warm-up allocates and, with `survivors`, its survivors profile (with memory on, where
   * its V8 can sample), ended when the window opens, or after a window by survivors(). Returns how
   * many started a survivors profile, once all answered or `timeoutMs` passed (a late one profiles
   * less of the load).
   */
  warm(window: number, survivors = false, timeoutMs = 10_000): Promise<number> {
    return this.ask('warm', 'warming', window, timeoutMs, { survivors });
  }

  /**
   * A settle period before window number `window` opens: every attached process ends its survivors
   * profile and takes the window's opening collection (with memory on). Returns how many took
   * one, once all answered or `timeoutMs` passed (a late one takes it when the window starts).
   */
  edge(window: number, timeoutMs = 30_000): Promise<number> {
    return this.ask('edge', 'edged', window, timeoutMs);
  }

  /**
   * After window number `window` closed, a load through a survivors profile (`warm` with
   * `survivors`): every attached process ends it with its full collection and writes it. Returns
   * the files by pid, once all answered or `timeoutMs` passed.
   */
  async survivors(window: number, timeoutMs = 30_000): Promise<Map<number, string>> {
    await this.ask('survive', 'survived', window, timeoutMs);
    return new Map(this.live().flatMap((p) => (typeof p.survived === 'string' ? [[p.pid, p.survived]] : [])));
  }

  /**
   * Sends `type` for window number `window` to every attached process and waits until each
   * answered (its `answer` set) or `timeoutMs` passed; returns how many answered yes.
   */
  private async ask(
    type: 'warm' | 'edge' | 'survive',
    answer: 'warming' | 'edged' | 'survived',
    window: number,
    timeoutMs: number,
    fields: object = {},
  ): Promise<number> {
    const targets = this.live();
    for (const probe of targets) {
      probe[answer] = undefined;
      probe.socket.write(`${JSON.stringify({ type, window, ...fields })}\n`);
    }
    await this.until(() => targets.every((p) => p[answer] !== undefined || p.socket.destroyed), timeoutMs);
    return targets.filter((p) => p[answer]).length;
  }

  /**
   * Opens measured window number `window` (1, 2, … one per scenario) in every attached
   * process; what an earlier window reported is forgotten.
   */
  async start(window = 1, timeoutMs = 10_000): Promise<void> {
    for (const probe of this.live()) {
      probe.started = undefined;
      probe.stopped = undefined;
      probe.socket.write(`${JSON.stringify({ type: 'start', window })}\n`);
    }
    await this.until(() => this.live().every((p) => p.started), timeoutMs);
  }

  /**
   * In a window measured in slices: the load is now elsewhere (`idle`) or here again (`busy`).
   * Every attached process marks its event-loop readings from here on; nothing is awaited (a
   * process busy with a request reads the mark once its loop is free, which is when the load it
   * had is done).
   */
  mark(state: 'idle' | 'busy'): void {
    for (const probe of this.live()) probe.socket.write(`{"type":"${state}"}\n`);
  }

  /** Closes the window everywhere and collects what each process wrote. */
  async stop(timeoutMs = 30_000): Promise<ProbeReport[]> {
    const targets = this.live();
    for (const probe of targets) probe.socket.write('{"type":"stop"}\n');
    await this.until(() => targets.every((p) => p.stopped || p.socket.destroyed), timeoutMs);
    return targets.map(
      (p) =>
        p.stopped ?? {
          pid: p.pid,
          node: p.node,
          profiler: p.started?.profiler ?? 'none',
          files: {},
          error: p.socket.destroyed
            ? 'the process exited before writing its profile'
            : 'no answer from the probe',
        },
    );
  }

  /** Profilers that started, with notes about fallbacks. */
  startedProfilers(): { pid: number; profiler: string; note?: string; error?: string }[] {
    return [...this.probes.values()].flatMap((p) => (p.started ? [{ pid: p.pid, ...p.started }] : []));
  }

  close(): Promise<void> {
    for (const probe of this.probes.values()) probe.socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
