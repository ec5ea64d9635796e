// The metrics' names for people. Words are render's: the verdict keys metrics by name only.
import { type MetricName, metricSpec } from '../settings/metrics.js';

const LABELS: Record<MetricName, string> = {
  requestsPerSecond: 'Requests/s',
  p50: 'Latency p50',
  p90: 'Latency p90',
  p99: 'Latency p99',
  errorRate: 'Errors',
  cpuPerRequest: 'CPU per request',
  mainThreadCpuPerRequest: 'Event-loop CPU per request',
  eventLoopUtilization: 'Event-loop utilisation',
  retainedBytesPerRequest: 'Retained per request',
  allocatedBytesPerRequest: 'Allocated per request',
  gcTimePerRequest: 'GC time per request',
  capacity: 'Capacity at the SLO',
  goodput: "Goodput at 2× base's capacity",
};

/** A metric's name for people ("CPU per request"); an unknown metric (an old history's) keeps its key. */
export const metricLabel = (metric: string): string =>
  Object.hasOwn(LABELS, metric) ? LABELS[metric as MetricName] : metric;

/** The format options of a metric's change (its unit), for formatChange and formatInterval. */
export const metricFormat = (metric: string): { metric: MetricName; unit: string } => ({
  metric: metric as MetricName,
  unit: metricSpec(metric)?.unit ?? '',
});
