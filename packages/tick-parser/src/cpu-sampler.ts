import { randomUUID } from 'node:crypto';
import { Session } from 'node:inspector';
import { HotpathTicksError } from './errors.js';

/** Which profiler ran: v8-profiler-next (preferred) or node:inspector's Profiler domain (fallback). */
export type InProcessProfiler = 'v8-profiler-next' | 'inspector';

export interface CpuSamplerOptions {
  /** Sampling interval in microseconds (default 1000). */
  samplingIntervalMicros?: number;
  /** Force one profiler; by default v8-profiler-next, falling back to node:inspector when it cannot load. */
  profiler?: InProcessProfiler;
  /**
   * How to load v8-profiler-next (tick-parser's startProfiling resolves it from this package; a
   * preloaded probe finds the copy built for the server's Node). Without it, node:inspector runs.
   */
  loadV8ProfilerNext?: () => unknown;
}

/** A running CPU profile of this process; `stop` gives the raw `.cpuprofile` object. */
export interface CpuSampler {
  readonly profiler: InProcessProfiler;
  /** Why v8-profiler-next did not run, when it was wanted and the inspector ran instead. */
  readonly fallback?: string;
  stop(): Promise<Record<string, unknown>>;
}

interface V8ProfilerNext {
  setGenerateType(type: 0 | 1): void;
  setSamplingInterval(micros: number): void;
  startProfiling(title: string, recordSamples: boolean): void;
  stopProfiling(title: string): (Record<string, unknown> & { delete(): void }) | undefined;
}

function loadV8ProfilerNext(load: () => unknown): V8ProfilerNext | Error {
  try {
    const api = load() as V8ProfilerNext | undefined;
    if (api && typeof api.startProfiling === 'function') return api;
    return new Error('the module does not look like v8-profiler-next');
  } catch (error) {
    return error as Error;
  }
}

function startV8ProfilerNext(api: V8ProfilerNext, interval: number): CpuSampler {
  const title = `hotpath-${randomUUID()}`;
  api.setGenerateType(1);
  api.setSamplingInterval(interval);
  api.startProfiling(title, true);
  let stopped = false;
  return {
    profiler: 'v8-profiler-next',
    async stop() {
      if (stopped)
        throw new HotpathTicksError('HP_TICKS_PROFILER_STATE', `profile ${title} was already stopped`);
      stopped = true;
      const raw = api.stopProfiling(title);
      if (!raw)
        throw new HotpathTicksError('HP_TICKS_PROFILER_STATE', `v8-profiler-next has no profile ${title}`);
      const { delete: remove, ...json } = raw;
      // Plain data: the addon's object holds getters and native handles.
      const copy = JSON.parse(JSON.stringify(json)) as Record<string, unknown>;
      remove.call(raw);
      return copy;
    },
  };
}

function post<T>(session: Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result as T)));
  });
}

async function startInspector(interval: number, fallback: string | undefined): Promise<CpuSampler> {
  const session = new Session();
  session.connect();
  try {
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.setSamplingInterval', { interval });
    await post(session, 'Profiler.start');
  } catch (error) {
    session.disconnect();
    throw new HotpathTicksError(
      'HP_TICKS_PROFILER_UNAVAILABLE',
      `node:inspector could not start the CPU profiler: ${(error as Error).message}`,
      { cause: error },
    );
  }
  let stopped = false;
  return {
    profiler: 'inspector',
    fallback,
    async stop() {
      if (stopped)
        throw new HotpathTicksError('HP_TICKS_PROFILER_STATE', 'this inspector profile was already stopped');
      stopped = true;
      try {
        const { profile } = await post<{ profile: Record<string, unknown> }>(session, 'Profiler.stop');
        return profile;
      } finally {
        session.disconnect();
      }
    },
  };
}

/**
 * Starts sampling this process's CPU with v8-profiler-next, or with node:inspector when that
 * cannot load (or `options.profiler` is 'inspector'). The one in-process CPU profiler of hotpath:
 * tick-parser's startProfiling parses what it gives, @hotpath/compare's probe writes it to a file.
 */
export async function startCpuSampler(options: CpuSamplerOptions = {}): Promise<CpuSampler> {
  const interval = options.samplingIntervalMicros ?? 1000;
  if (!Number.isInteger(interval) || interval < 1) {
    throw new HotpathTicksError(
      'HP_TICKS_BAD_OPTION',
      `samplingIntervalMicros ${interval} is not valid: expected a whole number >= 1`,
    );
  }
  let fallback: string | undefined;
  if (options.profiler !== 'inspector') {
    const api = loadV8ProfilerNext(
      options.loadV8ProfilerNext ??
        (() => {
          throw new Error('no loader for v8-profiler-next was given');
        }),
    );
    if (!(api instanceof Error)) {
      try {
        return startV8ProfilerNext(api, interval);
      } catch (error) {
        if (options.profiler === 'v8-profiler-next') throw error;
        fallback = `v8-profiler-next failed to start (${(error as Error).message.split('\n')[0]}); node:inspector profiled instead`;
      }
    } else {
      if (options.profiler === 'v8-profiler-next') {
        throw new HotpathTicksError(
          'HP_TICKS_PROFILER_UNAVAILABLE',
          `v8-profiler-next could not be loaded: ${api.message.split('\n')[0]}`,
          { cause: api },
        );
      }
      fallback = `v8-profiler-next could not be loaded (${api.message.split('\n')[0]}); node:inspector profiled instead`;
    }
  }
  return startInspector(interval, fallback);
}
