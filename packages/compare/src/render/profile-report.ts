import { inert } from '../printable.js';
import type { ProfileReport } from '../run-artifacts.js';
import { share, shortLocation } from './format.js';

/** `hotpath profile`'s terminal text. Pure. */
export function renderProfileText(report: ProfileReport): string {
  const many = new Set(report.rounds.map((m) => m.scenario)).size > 1;
  const lines = report.rounds.map(
    (m) =>
      `round ${m.round}${many ? ` ${inert(m.scenario)}` : ''}: ${m.requestsPerSecond.toFixed(1)} req/s, p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms, errors ${(m.errorRate * 100).toFixed(2)} %`,
  );
  lines.push('', `hottest functions (self time, profiler: ${inert(report.profilers.join(', ')) || 'none'}):`);
  for (const f of report.topFunctions.slice(0, 10))
    lines.push(`  ${share(f.share).padStart(7)}  ${inert(f.name)}  ${inert(shortLocation(f.file, f.line))}`);
  const health = report.eventLoop;
  if (health)
    lines.push(
      '',
      `event loop: delay mean ${health.delayMean.toFixed(1)} ms, p99 ${health.delayP99.toFixed(1)} ms, utilisation ${(health.utilization * 100).toFixed(0)} %`,
    );
  for (const w of report.warnings) lines.push(`warning: ${inert(w)}`);
  return `${lines.join('\n')}\n`;
}

/** profile.json's content: the ProfileReport without the merged profile (that is in the files). */
export function profileJson(report: ProfileReport): Omit<ProfileReport, 'profile'> {
  const { profile: _profile, ...json } = report;
  return json;
}
