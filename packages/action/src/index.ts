export type { MetricComparison } from './statistics.js';
export { compareSamples, tQuantile975 } from './statistics.js';
