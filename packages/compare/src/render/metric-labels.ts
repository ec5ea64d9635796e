// The metrics' names for people, from the catalogue (settings/metrics.ts). The verdict keys
// metrics by name only.
import { type MetricName, metricSpec } from '../settings/metrics.js';

/** A metric's name for people ("CPU per request"); an unknown metric (an old history's) keeps its key. */
export const metricLabel = (metric: string): string => metricSpec(metric)?.label ?? metric;

/** The format options of a metric's change (its unit), for formatChange and formatInterval. */
export const metricFormat = (metric: string): { metric: MetricName; unit: string } => ({
  metric: metric as MetricName,
  unit: metricSpec(metric)?.unit ?? '',
});
