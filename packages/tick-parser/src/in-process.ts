import { randomUUID } from 'node:crypto';
import { Session } from 'node:inspector';
import { createRequire } from 'node:module';
import { parseCpuProfile } from './cpuprofile.js';
import { HotpathTicksError } from './errors.js';
import type { Profile } from './model.js';

/** Which profiler ran: v8-profiler-next (preferred) or node:inspector's Profiler domain (fallback). */
export type InProcessProfiler = 'v8-profiler-next' | 'inspector';

export interface InProcessOptions {
  /** Sampling interval in microseconds (default 1000). */
  samplingIntervalMicros?: number;
  /** Force one profiler; by default v8-profiler-next, falling back to node:inspector when it cannot load. */
  profiler?: InProcessProfiler;
}

/** A running CPU profile of this process. */
export interface ProfilingSession {
  readonly profiler: InProcessProfiler;
  /** Stops sampling and returns the profile (`meta.profiler` says which profiler ran). */
  stop(): Promise<Profile>;
}

interface V8ProfilerNext {
  setGenerateType(type: 0 | 1): void;
  setSamplingInterval(micros: number): void;
  startProfiling(title: string, recordSamples: boolean): void;
  stopProfiling(title: string): (Record<string, unknown> & { delete(): void }) | undefined;
}

function loadV8ProfilerNext(): V8ProfilerNext | Error {
  try {
    const require = createRequire(import.meta.url);
    return require('v8-profiler-next') as V8ProfilerNext;
  } catch (error) {
    return error as Error;
  }
}

function withProfiler(profile: Profile, profiler: InProcessProfiler, warnings: string[]): Profile {
  profile.meta = { ...profile.meta, profiler };
  profile.warnings.push(...warnings);
  return profile;
}

function startV8ProfilerNext(api: V8ProfilerNext, interval: number): ProfilingSession {
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
      try {
        return withProfiler(parseCpuProfile(json), 'v8-profiler-next', []);
      } finally {
        remove.call(raw);
      }
    },
  };
}

function post<T>(session: Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result as T)));
  });
}

async function startInspector(interval: number, warnings: string[]): Promise<ProfilingSession> {
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
    async stop() {
      if (stopped)
        throw new HotpathTicksError('HP_TICKS_PROFILER_STATE', 'this inspector profile was already stopped');
      stopped = true;
      try {
        const { profile } = await post<{ profile: unknown }>(session, 'Profiler.stop');
        return withProfiler(parseCpuProfile(profile), 'inspector', warnings);
      } finally {
        session.disconnect();
      }
    },
  };
}

/**
 * Starts a CPU profile of this process with v8-profiler-next (loaded lazily), or with node:inspector
 * when that cannot load or `options.profiler` is 'inspector'. `session.profiler` says which runs.
 */
export async function startProfiling(options: InProcessOptions = {}): Promise<ProfilingSession> {
  const interval = options.samplingIntervalMicros ?? 1000;
  if (!Number.isInteger(interval) || interval < 1) {
    throw new HotpathTicksError(
      'HP_TICKS_BAD_OPTION',
      `samplingIntervalMicros ${interval} is not valid: expected a whole number >= 1`,
    );
  }
  const warnings: string[] = [];
  if (options.profiler !== 'inspector') {
    const api = loadV8ProfilerNext();
    if (!(api instanceof Error)) return startV8ProfilerNext(api, interval);
    if (options.profiler === 'v8-profiler-next') {
      throw new HotpathTicksError(
        'HP_TICKS_PROFILER_UNAVAILABLE',
        `v8-profiler-next could not be loaded: ${api.message.split('\n')[0]}`,
        { cause: api },
      );
    }
    warnings.push(
      `v8-profiler-next could not be loaded (${api.message.split('\n')[0]}); node:inspector profiled instead`,
    );
  }
  return startInspector(interval, warnings);
}

/** Stops a session from `startProfiling` and returns its profile. */
export function stopProfiling(session: ProfilingSession): Promise<Profile> {
  return session.stop();
}

/** Profiles `fn` (sync or async) and returns its result with the CPU profile of the call. */
export async function profileInProcess<T>(
  fn: () => T | Promise<T>,
  options: InProcessOptions = {},
): Promise<{ result: T; profile: Profile; profiler: InProcessProfiler }> {
  const session = await startProfiling(options);
  let result: T;
  try {
    result = await fn();
  } catch (error) {
    await session.stop().catch(() => undefined);
    throw error;
  }
  const profile = await session.stop();
  return { result, profile, profiler: session.profiler };
}
