import { EventEmitter } from 'node:events';
import { Worker } from 'node:worker_threads';
import { HotpathLoadError, type LoadErrorCode } from './errors.js';
import type { Tick } from './load-engine.js';
import type { ResolvedOptions, RunOptions } from './options.js';
import type { PartialResult } from './result.js';

export type WorkerMessage =
  | { type: 'tick'; tick: Tick }
  | { type: 'warmup'; tick: Tick }
  | { type: 'result'; partial: PartialResult }
  | { type: 'error'; code: LoadErrorCode; message: string };

/** Splits `total` into `parts` whole shares that add up exactly. */
export function splitEvenly(total: number, parts: number): number[] {
  const base = Math.floor(total / parts);
  const extra = total - base * parts;
  return Array.from({ length: parts }, (_, i) => base + (i < extra ? 1 : 0));
}

// Built output either way: from src/ (tests) and from dist/ this names dist/worker-entry.js.
const WORKER_ENTRY = new URL('../dist/worker-entry.js', import.meta.url);

/**
 * Runs a load test on N worker threads, each with its share of the connections, amount and
 * rate; emits a 'tick' per second once every worker reported it; resolves with each partial.
 */
export class WorkerPool extends EventEmitter {
  private readonly workers: Worker[] = [];
  private readonly pendingTicks = new Map<string, { count: number; tick: Tick }>();
  private stopped = false;

  constructor(
    private readonly options: RunOptions,
    private readonly resolved: ResolvedOptions,
  ) {
    super();
  }

  start(): Promise<PartialResult[]> {
    const n = this.resolved.workers;
    const connections = splitEvenly(this.resolved.connections, n);
    const amounts = this.resolved.amount === undefined ? undefined : splitEvenly(this.resolved.amount, n);
    const { signal: _signal, ...plain } = this.options;
    const shares = connections.map(
      (c, i): RunOptions => ({
        ...plain,
        workers: 1,
        connections: c,
        duration: this.resolved.duration,
        amount: amounts?.[i],
        rate: this.resolved.rate === undefined ? undefined : this.resolved.rate / n,
      }),
    );
    const runs = shares
      .filter((share) => share.amount === undefined || share.amount > 0)
      .map((share) => this.startWorker(share));
    return Promise.all(runs).catch((error: unknown) => {
      this.stop();
      throw error;
    });
  }

  stop(): void {
    this.stopped = true;
    for (const worker of this.workers) worker.postMessage({ type: 'stop' });
  }

  private startWorker(share: RunOptions): Promise<PartialResult> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(WORKER_ENTRY, { workerData: share });
      this.workers.push(worker);
      if (this.stopped) worker.postMessage({ type: 'stop' });
      let settled = false;
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'tick' || message.type === 'warmup') this.onTick(message.type, message.tick);
        else if (message.type === 'result') {
          settled = true;
          resolve(message.partial);
        } else {
          settled = true;
          reject(new HotpathLoadError(message.code, message.message));
        }
      });
      worker.on('error', (cause) => {
        if (settled) return;
        settled = true;
        reject(
          new HotpathLoadError('HP_LOAD_WORKER_FAILED', `worker thread failed: ${cause.message}`, { cause }),
        );
      });
      worker.on('exit', (code) => {
        if (settled) return;
        settled = true;
        reject(
          new HotpathLoadError(
            'HP_LOAD_WORKER_FAILED',
            `worker thread exited with code ${code} before a result`,
          ),
        );
      });
    });
  }

  /** Emits a second ('tick' measured, 'warmup' warm-up) once every worker reported it. */
  private onTick(kind: 'tick' | 'warmup', tick: Tick): void {
    const key = `${kind}:${tick.second}`;
    const entry = this.pendingTicks.get(key) ?? {
      count: 0,
      tick: { second: tick.second, requests: 0, bytes: 0, errors: 0 },
    };
    entry.count++;
    entry.tick.requests += tick.requests;
    entry.tick.bytes += tick.bytes;
    entry.tick.errors += tick.errors;
    if (entry.count === this.workers.length) {
      this.pendingTicks.delete(key);
      this.emit(kind, entry.tick);
    } else this.pendingTicks.set(key, entry);
  }
}
