export type { GuardErrorCode } from './errors.js';
export { GUARD_ERROR_CODES, HotpathGuardError } from './errors.js';
export type {
  EventLoopDelayStats,
  Monitor,
  MonitorOptions,
  MonitorSample,
  MonitorSnapshot,
} from './monitor.js';
export { createMonitor } from './monitor.js';
