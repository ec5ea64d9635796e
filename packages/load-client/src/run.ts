import { EventEmitter } from 'node:events';
import { LoadEngine, type Tick } from './load-engine.js';
import { type ResolvedOptions, type RunOptions, resolveOptions } from './options.js';
import { protocolFor } from './protocol.js';
import { buildResult, type ResultContext, type RunResult, toPartial } from './result.js';
import { WorkerPool } from './worker-pool.js';

export interface LoadRunEvents {
  tick: [Tick];
}

/**
 * A run in progress: emits 'tick' once per measured second; `result` settles when it ends
 * (duration, amount, `stop()` or the signal). `stop()` keeps what was measured so far.
 */
export class LoadRun extends EventEmitter<LoadRunEvents> {
  readonly result: Promise<RunResult>;
  readonly options: ResolvedOptions;
  private readonly runner: LoadEngine | WorkerPool;

  constructor(options: RunOptions) {
    super();
    this.options = resolveOptions(options);
    const resolved = this.options;
    const context = resultContext(resolved);
    if (resolved.workers > 1) {
      const pool = new WorkerPool(options, resolved);
      this.runner = pool;
      pool.on('tick', (tick: Tick) => this.emit('tick', tick));
      const onAbort = () => pool.stop();
      if (options.signal?.aborted) pool.stop();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.result = pool
        .start()
        .finally(() => options.signal?.removeEventListener('abort', onAbort))
        .then((parts) => buildResult(parts, context));
    } else {
      const engine = new LoadEngine(resolved, protocolFor(resolved), options.signal);
      this.runner = engine;
      engine.on('tick', (tick: Tick) => this.emit('tick', tick));
      this.result = engine.start().then((outcome) => buildResult([toPartial(outcome)], context));
    }
  }

  /** Stops the run now; `result` then holds what was measured so far. */
  stop(): void {
    this.runner.stop();
  }
}

export function resultContext(options: ResolvedOptions): ResultContext {
  return {
    url: options.url,
    connections: options.connections,
    pipelining: options.pipelining,
    rate: options.rate,
    workers: options.workers,
  };
}

/** Starts a run and returns it with its progress events; options are validated first (throws). */
export function createRun(options: RunOptions): LoadRun {
  return new LoadRun(options);
}

/** Runs a load test and resolves with its result. */
export async function run(options: RunOptions): Promise<RunResult> {
  return createRun(options).result;
}
