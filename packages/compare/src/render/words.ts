import type { HotFunctionDiff, MetricVerdict, Report, ScenarioReport } from '../model.js';
import { displayName, formatChange } from './format.js';

/** The one-line verdict of a scenario, in hotpath's words (names from the PR as they are). */
export function scenarioSummary(
  s: Pick<ScenarioReport, 'metrics' | 'hotFunctions' | 'functionsRegressed'>,
): string {
  const hot = hotterText(s.hotFunctions);
  const regressed = s.metrics.filter((m) => m.inVerdict && m.status === 'regressed');
  const improved = s.metrics.filter((m) => m.inVerdict && m.status === 'improved');
  if (regressed.length > 0) return `Regression: ${changes(regressed)}${hot}`;
  if (s.functionsRegressed) return `Regression: hotter functions: ${hotNames(s.hotFunctions).join(', ')}`;
  if (improved.length > 0) return `Improvement: ${changes(improved)}${hot}`;
  return `No significant change beyond the threshold${hot}`;
}

/** The metrics part of a scenario's verdict (no function names): safe to show as plain text. */
export function metricsSummary(metrics: readonly MetricVerdict[]): string {
  return scenarioSummary({ metrics: [...metrics], functionsRegressed: false });
}

/** The one-line verdict of the run over its scenarios. */
export function runSummary(report: Pick<Report, 'scenarios'>): string {
  const { scenarios } = report;
  const [only] = scenarios;
  if (only && scenarios.length === 1) return scenarioSummary(only);
  const regressed = scenarios.filter((s) => s.regressed);
  const improved = scenarios.filter((s) => s.improved && !s.regressed);
  const names = (list: ScenarioReport[]) => list.map((s) => s.name).join(', ');
  if (regressed.length > 0)
    return `Regression in ${regressed.length} of ${scenarios.length} scenarios: ${names(regressed)}`;
  if (improved.length > 0)
    return `Improvement in ${improved.length} of ${scenarios.length} scenarios: ${names(improved)}`;
  return `No significant change beyond the threshold in ${scenarios.length} scenarios`;
}

const hotNames = (hot: HotFunctionDiff | undefined) => (hot?.flagged ?? []).slice(0, 3).map(displayName);

function hotterText(hot: HotFunctionDiff | undefined): string {
  const names = hotNames(hot);
  return names.length ? `; hotter: ${names.join(', ')}` : '';
}

const changes = (ms: readonly MetricVerdict[]) =>
  ms.map((m) => `${m.label} ${formatChange(m, m.change)}`).join(', ');
