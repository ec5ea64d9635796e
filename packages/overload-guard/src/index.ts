export type { Monitor, MonitorOptions, MonitorSnapshot } from './monitor.js';
export { createMonitor } from './monitor.js';
