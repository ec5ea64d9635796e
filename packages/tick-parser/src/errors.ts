import { createErrorClass } from './error-class.js';

/** Stable error codes of @hotpath/tick-parser. Every one is documented in the README. */
export const ERROR_CODES = {
  HP_TICKS_UNKNOWN_FORMAT: 'input is neither a V8 tick log nor a .cpuprofile',
  HP_TICKS_BAD_CPUPROFILE: 'JSON is not a .cpuprofile',
  HP_TICKS_READ_FAILED: 'the input could not be read',
  HP_TICKS_BAD_OPTION: 'an option or CLI flag has a bad value',
  HP_TICKS_PROFILER_UNAVAILABLE: 'no CPU profiler could be started in this process',
  HP_TICKS_PROFILER_STATE: 'profiling was stopped without being started, or started twice',
  HP_TICKS_SPAWN_FAILED: 'the command to record could not be started',
  HP_TICKS_NO_LOG: 'the recorded command wrote no V8 tick log',
} as const;

export type TicksErrorCode = keyof typeof ERROR_CODES;

/** Base class of every error this package throws; `code` is stable, `message` names the bad value. */
export class HotpathTicksError extends createErrorClass('HotpathTicksError', ERROR_CODES) {}
