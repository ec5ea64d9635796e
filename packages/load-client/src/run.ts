import { EventEmitter } from 'node:events';
import { LoadEngine, type Tick } from './load-engine.js';
import { preloadMemcache } from './memcache-preload.js';
import { isMemcacheFailure, memcacheStatusLabel } from './memcache-protocol.js';
import { type ResolvedOptions, type RunOptions, resolveOptions } from './options.js';
import { protocolFor } from './protocol.js';
import { buildResult, type ResultContext, type RunResult, toPartial } from './result.js';
import { WorkerPool } from './worker-pool.js';

export interface LoadRunEvents {
  /** One measured second. */
  tick: [Tick];
  /** One second of warm-up (excluded from the result). */
  warmup: [Tick];
}

/**
 * A run in progress: emits 'warmup' once per second of warm-up and 'tick' once per measured second; `result` settles when it ends
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
      pool.on('warmup', (tick: Tick) => this.emit('warmup', tick));
      const onAbort = () => pool.stop();
      if (options.signal?.aborted) pool.stop();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.result = prepare(resolved)
        .then(() => pool.start())
        .finally(() => options.signal?.removeEventListener('abort', onAbort))
        .then((parts) => buildResult(parts, context));
    } else {
      const engine = new LoadEngine(resolved, protocolFor(resolved), options.signal);
      this.runner = engine;
      engine.on('tick', (tick: Tick) => this.emit('tick', tick));
      engine.on('warmup', (tick: Tick) => this.emit('warmup', tick));
      this.result = prepare(resolved)
        .then(() => engine.start())
        .then((outcome) => buildResult([toPartial(outcome)], context));
    }
  }

  /** Stops the run now; `result` then holds what was measured so far. */
  stop(): void {
    this.runner.stop();
  }
}

/** Work before the load starts: a memcache get/mix run stores its hit-ratio share of keys. */
async function prepare(options: ResolvedOptions): Promise<void> {
  if (options.target.kind === 'memcache' && options.target.preload)
    await preloadMemcache(options.target, options.timeout);
}

export function resultContext(options: ResolvedOptions): ResultContext {
  const memcache = options.target.kind === 'memcache';
  return {
    url: options.url,
    connections: options.connections,
    pipelining: options.pipelining,
    rate: options.rate,
    workers: options.workers,
    statusLabel: memcache ? memcacheStatusLabel : undefined,
    isFailureStatus: memcache ? isMemcacheFailure : undefined,
    tls: options.target.kind === 'http' && options.target.tls !== null,
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
